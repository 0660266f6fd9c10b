"""Short-lived media tickets: how the console's ``<audio>`` player streams a recording with
HTTP Range without the Bearer token in its URL.

An ``<audio src>`` cannot send an ``Authorization`` header, so without a ticket the console had
to download the whole file into a blob before playing (no streaming, no seeking until it all
arrived). A ticket is asked for with the token (``POST /api/recordings/:id/tickets``), is 256
random bits, and is kept in Redis under ``<prefix>media-ticket:<sha256 of it>`` (only the hash:
a Redis dump holds no ticket) for ``RECORDING_MEDIA_TICKET_TTL_SECONDS``.

Unlike the live view's single-use ticket, a media ticket serves several requests while it lives:
one playback is several Range requests (the first bytes, then each seek), all with the same
``src``. It is bound to one recording, one account and the tenant host it was issued on, so it
opens nothing else; an expired ticket is refused.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass

import redis

from app import limits
from app.errors import Unauthorized

MAX_TICKET_LENGTH = 128


class InvalidMediaTicket(Unauthorized):
    code = "invalid_ticket"


@dataclass(frozen=True)
class MediaTicket:
    account_id: uuid.UUID
    recording_id: uuid.UUID


def _key(prefix: str, ticket: str) -> str:
    return f"{prefix}media-ticket:{hashlib.sha256(ticket.encode()).hexdigest()}"


def issue(client: redis.Redis, prefix: str, *, account_id: uuid.UUID, recording_id: uuid.UUID,
          subdomain: str) -> str:
    ticket = secrets.token_urlsafe(32)
    body = {"account": str(account_id), "recording": str(recording_id), "subdomain": subdomain}
    client.set(_key(prefix, ticket), json.dumps(body), ex=limits.RECORDING_MEDIA_TICKET_TTL_SECONDS)
    return ticket


def redeem(client: redis.Redis, prefix: str, ticket: str | None, *, recording_id: uuid.UUID,
           subdomain: str) -> MediaTicket:
    """The ticket's account, for this recording only; 401 ``invalid_ticket`` when the ticket is
    unknown, expired, for another recording or issued on another tenant's host (the
    message does not say which)."""
    if not ticket or len(ticket) > MAX_TICKET_LENGTH:
        raise InvalidMediaTicket("Ask for a media ticket (POST /api/recordings/:id/tickets) and use it within "
                                 f"{limits.RECORDING_MEDIA_TICKET_TTL_SECONDS} s.")
    raw = client.get(_key(prefix, ticket))
    body = json.loads(raw) if raw else None
    if body is None or body.get("subdomain") != subdomain or body.get("recording") != str(recording_id):
        raise InvalidMediaTicket("The media ticket is unknown or expired; ask for a new one.")
    return MediaTicket(account_id=uuid.UUID(body["account"]), recording_id=recording_id)

