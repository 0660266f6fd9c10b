"""Single-use stream tickets: how an ``EventSource`` authenticates without a token in its URL.

A browser's ``EventSource`` cannot send an ``Authorization`` header, and a bearer token in a
query string ends up in access logs, proxies and the browser's history for as long as the
token lives. So the console asks for a ticket with its token (``POST /api/live/tickets``) and
opens the stream with that: a random 256-bit value, kept in Redis under
``<prefix>live-ticket:<sha256 of it>`` for ``LIVE_VIEW_TICKET_TTL_SECONDS``, taken with
``GETDEL`` (a second use finds nothing), and bound to the tenant it was issued on (another
tenant's host cannot redeem it). Only its hash is stored, so a Redis dump holds no ticket.
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


class InvalidTicket(Unauthorized):
    code = "invalid_ticket"


@dataclass(frozen=True)
class Ticket:
    account_id: str
    user_id: str
    subdomain: str


def _key(prefix: str, ticket: str) -> str:
    return f"{prefix}live-ticket:{hashlib.sha256(ticket.encode()).hexdigest()}"


def issue(client: redis.Redis, prefix: str, *, account_id: uuid.UUID, user_id: uuid.UUID, subdomain: str) -> str:
    ticket = secrets.token_urlsafe(32)
    body = {"account": str(account_id), "user": str(user_id), "subdomain": subdomain}
    client.set(_key(prefix, ticket), json.dumps(body), ex=limits.LIVE_VIEW_TICKET_TTL_SECONDS)
    return ticket


def redeem(client: redis.Redis, prefix: str, ticket: str | None, *, subdomain: str) -> Ticket:
    """The ticket's holder, once; 401 ``invalid_ticket`` when unknown, used, expired or
    issued on another tenant's host (the message does not say which)."""
    if not ticket or len(ticket) > 128:
        raise InvalidTicket("Ask for a stream ticket (POST /api/live/tickets) and use it within "
                            f"{limits.LIVE_VIEW_TICKET_TTL_SECONDS} s, once.")
    raw = client.getdel(_key(prefix, ticket))
    body = json.loads(raw) if raw else None
    if body is None or body.get("subdomain") != subdomain:
        raise InvalidTicket("The stream ticket is unknown, used or expired; ask for a new one.")
    return Ticket(account_id=body["account"], user_id=body["user"], subdomain=body["subdomain"])
