"""Which campaign contact a call dialled, and the code an agent may set on it.

An agent dispositions the call it handled over the agent channel (docs/agents.md); when that
call was a campaign's attempt, the same code must land on the campaign contact, or the list's
outcome stays blank unless an admin copies it over. The contact is named twice over a call's
life: while it is live, only by the dialer's Redis mark ``campaign:call:<callId>`` (written when
it dials, read and removed when the outcome is applied on ``call.ended``); from then on by the
call record's ``campaign_id``/``contact_id`` (stamped in the outcome's transaction,
app/campaigns/picking.record_outcome). A disposition during wrap-up finds the record; one sent
while still talking finds the mark.

A contact's code is stricter than an interaction's: the admin route
(``PUT /api/campaigns/{id}/contacts/{contactId}/disposition``) takes letters, digits, ``_ . -``
only (it goes into CSV exports and reports as a key), so an agent's code for a campaign call is
held to the same pattern.
"""
from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Optional

import redis
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import limits
from app.errors import ValidationFailed
from app.models import CallRecord

# Shared with the admin route's schema (app/api/campaigns/schemas.DispositionSchema).
CONTACT_CODE = re.compile(rf"^[A-Za-z0-9_.-]{{{limits.DISPOSITION_MIN_LENGTH},{limits.DISPOSITION_MAX_LENGTH}}}\Z")
CONTACT_CODE_RULE = f"{limits.DISPOSITION_MIN_LENGTH}-{limits.DISPOSITION_MAX_LENGTH} letters, digits, '_', '.' or '-'"


class InvalidContactDisposition(ValidationFailed):
    """The code (or note) cannot go on a campaign contact."""
    code = "invalid_disposition"


@dataclass(frozen=True)
class DialledContact:
    campaign_id: uuid.UUID
    contact_id: uuid.UUID


def call_mark_key(prefix: str, call_id: uuid.UUID | str) -> str:
    """The dialer's Redis mark of a campaign call (its account, campaign and contact)."""
    return f"{prefix}campaign:call:{call_id}"


def contact_code(code: str, note: Optional[str]) -> None:
    """Raises InvalidContactDisposition unless ``code`` and ``note`` fit a campaign contact."""
    if not CONTACT_CODE.match(code):
        raise InvalidContactDisposition(f"A campaign contact's disposition code is {CONTACT_CODE_RULE}.")
    if note is not None and (not isinstance(note, str) or len(note) > limits.CAMPAIGN_DISPOSITION_NOTE_MAX_LENGTH):
        raise InvalidContactDisposition(
            f"The note must be text of at most {limits.CAMPAIGN_DISPOSITION_NOTE_MAX_LENGTH} characters.")


def contact_of_call(db: Session, redis_client: redis.Redis, prefix: str, account_id: uuid.UUID,
                    call_id: uuid.UUID) -> Optional[DialledContact]:
    """The campaign contact ``call_id`` dialled, for this account only; None when it is no
    campaign call. The call record wins (final); a live call is known by the dialer's mark."""
    row = db.execute(select(CallRecord.campaign_id, CallRecord.contact_id)
                     .where(CallRecord.account_id == account_id, CallRecord.call_id == call_id)).first()
    if row is not None and row.campaign_id is not None and row.contact_id is not None:
        return DialledContact(row.campaign_id, row.contact_id)
    raw = redis_client.get(call_mark_key(prefix, call_id))
    if raw is None:
        return None
    mark = json.loads(raw)
    if mark.get("account") != str(account_id):
        return None
    return DialledContact(uuid.UUID(mark["campaign"]), uuid.UUID(mark["contact"]))
