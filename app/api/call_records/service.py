"""Reading call records: newest first, keyset on (started_at, public_id)."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.pagination import Page, keyset_page
from app.errors import NotFound
from app.exports.filters import CallRecordFilters
from app.models import CallRecord, InteractionSegment, InteractionSummary


def list_page(db: Session, account_id: uuid.UUID, filters: CallRecordFilters, *,
              cursor: str | None, limit: int) -> Page[CallRecord]:
    stmt = filters.apply(select(CallRecord).where(CallRecord.account_id == account_id))
    return keyset_page(db, stmt, [CallRecord.started_at, CallRecord.public_id],
                       cursor=cursor, limit=limit, descending=True)


def detail(db: Session, account_id: uuid.UUID, public_id: uuid.UUID) -> dict[str, Any]:
    """The record with its interaction summary and the agents' windows of its conversation;
    another tenant's id is a plain 404."""
    record = db.scalar(select(CallRecord).where(CallRecord.public_id == public_id,
                                                CallRecord.account_id == account_id))
    if record is None:
        raise NotFound("No such call record.", code="call_record_not_found")
    summary = db.scalar(select(InteractionSummary).where(InteractionSummary.trace_id == record.trace_id,
                                                         InteractionSummary.account_id == account_id))
    segments = db.scalars(select(InteractionSegment).where(InteractionSegment.trace_id == record.trace_id,
                                                          InteractionSegment.account_id == account_id)
                          .order_by(InteractionSegment.started_at)).all()
    body = {name: getattr(record, name) for name in CallRecord.__table__.c.keys()}
    body["summary"] = summary
    body["segments"] = list(segments)
    return body
