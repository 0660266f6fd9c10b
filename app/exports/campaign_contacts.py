"""The CSV export of a campaign's contact outcomes: one row per contact, streamed from a
server-side cursor, every cell through the formula guard (``iter_csv``): a contact's name and
attributes come from an imported list, i.e. from whoever wrote the file.

Logged to the compliance access log (``campaign_contacts.export``, with the rows written, or
``.incomplete`` when the stream is cut): the file holds customers' numbers.
"""
from __future__ import annotations

import json
import uuid
from contextlib import ExitStack
from datetime import datetime, timezone
from typing import Any, Iterator, Optional, Sequence

from sqlalchemy import select

from app.db.engine import tenant_session
from app.exports.compliance import log_access
from app.exports.csv_stream import iter_csv
from app.models import CampaignContact

COLUMNS: tuple[str, ...] = (
    "Contact ID", "Phone Number", "Name", "Status", "Attempts", "Skips", "Last Outcome", "Last AMD Result",
    "Last Attempt", "Next Attempt", "Disposition", "Disposition Note", "Disposed At", "Created", "Attributes",
)
FETCH_BATCH = 1000
ACTION_COMPLETED = "campaign_contacts.export"
ACTION_INCOMPLETE = "campaign_contacts.export.incomplete"


def _time(value: Optional[datetime]) -> Optional[str]:
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z") if value else None


def to_csv_row(c: CampaignContact) -> list[Any]:
    return [str(c.id), "+" + c.phone_number, c.name, c.status, c.attempts, c.skips, c.last_result,
            c.last_amd_result,
            _time(c.last_attempt_at), _time(c.next_attempt_at), c.disposition, c.disposition_note,
            _time(c.disposed_at), _time(c.created_at),
            json.dumps(c.attributes, ensure_ascii=False, sort_keys=True) if c.attributes else None]


def stream(account_id: uuid.UUID, user_id: Optional[uuid.UUID], campaign_id: uuid.UUID,
           remote_addr: Optional[str]) -> Iterator[str]:
    """The CSV chunks, oldest contact first. The query runs before the first chunk (a refusal
    becomes the API's JSON error, not a cut file); the caller checked the campaign is the
    account's."""
    session = ExitStack()
    try:
        db = session.enter_context(tenant_session(account_id))
        result = db.scalars(select(CampaignContact)
                            .where(CampaignContact.account_id == account_id, CampaignContact.campaign_id == campaign_id)
                            .order_by(CampaignContact.created_at, CampaignContact.id)
                            .execution_options(yield_per=FETCH_BATCH))
    except BaseException:
        session.close()
        raise
    return _chunks(account_id, user_id, campaign_id, remote_addr, session, result)


def _chunks(account_id: uuid.UUID, user_id: Optional[uuid.UUID], campaign_id: uuid.UUID,
            remote_addr: Optional[str], session: ExitStack, result: Any) -> Iterator[str]:
    written = 0
    completed = False

    def rows() -> Iterator[Sequence[Any]]:
        nonlocal written
        for contact in result:
            yield to_csv_row(contact)
            written += 1

    try:
        yield from iter_csv(COLUMNS, rows())
        completed = True
    finally:
        session.close()
        log_access(account_id, user_id, ACTION_COMPLETED if completed else ACTION_INCOMPLETE,
                   filters={"campaign_id": str(campaign_id)}, row_count=written, remote_addr=remote_addr)
