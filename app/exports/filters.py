"""The call-record filters shared by the list endpoint and the CSV export, so both always select
the same rows for the same query string."""
from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, or_

from app.models import CallRecord


@dataclass(frozen=True)
class CallRecordFilters:
    started_from: datetime | None = None   # inclusive
    started_to: datetime | None = None     # exclusive
    direction: str | None = None
    agent_id: uuid.UUID | None = None
    queue_id: uuid.UUID | None = None
    status: str | None = None
    call_id: uuid.UUID | None = None       # one leg: the id POST /api/calls and webhooks give
    number: str | None = None              # digits contained in the caller's or callee's number
    campaign_id: uuid.UUID | None = None   # the calls an outbound campaign placed

    @classmethod
    def from_query(cls, query: dict[str, Any]) -> "CallRecordFilters":
        return cls(
            started_from=query.get("from"),
            started_to=query.get("to"),
            direction=query.get("direction"),
            agent_id=query.get("agent_id"),
            queue_id=query.get("queue_id"),
            status=query.get("status"),
            call_id=query.get("call_id"),
            number=query.get("number"),
            campaign_id=query.get("campaign_id"),
        )

    def apply(self, stmt: Select[Any]) -> Select[Any]:
        if self.started_from is not None:
            stmt = stmt.where(CallRecord.started_at >= self.started_from)
        if self.started_to is not None:
            stmt = stmt.where(CallRecord.started_at < self.started_to)
        if self.direction is not None:
            stmt = stmt.where(CallRecord.direction == self.direction)
        if self.agent_id is not None:
            stmt = stmt.where(CallRecord.agent_id == self.agent_id)
        if self.queue_id is not None:
            stmt = stmt.where(CallRecord.queue_id == self.queue_id)
        if self.status is not None:
            stmt = stmt.where(CallRecord.status == self.status)
        if self.call_id is not None:
            stmt = stmt.where(CallRecord.call_id == self.call_id)
        if self.number is not None:
            stmt = stmt.where(or_(CallRecord.from_number.contains(self.number, autoescape=True),
                                  CallRecord.to_number.contains(self.number, autoescape=True)))
        if self.campaign_id is not None:
            stmt = stmt.where(CallRecord.campaign_id == self.campaign_id)
        return stmt

    def to_log(self) -> dict[str, Any]:
        """JSON for the compliance log: only the filters actually given, as strings."""
        names = {"started_from": "from", "started_to": "to"}
        return {names.get(k, k): (v.isoformat() if isinstance(v, datetime) else str(v))
                for k, v in asdict(self).items() if v is not None}
