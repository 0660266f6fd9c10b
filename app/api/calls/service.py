"""Placing an outbound call: checks that need the tenant's data, then ``call.originate``.

Why through the bus: the API has no ESL link; whichever controller takes the message dials it
(least-cost routing, concurrency limits), and the call record and events follow from there.
The message is written to the outbox in the request's own transaction, so a 202 means it will
be dialled even if RabbitMQ is briefly away.
"""
from __future__ import annotations

import uuid
from typing import Any, Optional

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.calls import call_state
from app.calls.originate import OriginateRequest, originate_payload
from app.errors import NotFound, ValidationFailed
from app.events.payloads import emit
from app.models import Application, CallRecord, PhoneNumber


def place_call(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> dict[str, Any]:
    if db.scalar(select(Application.id).where(Application.id == data["application_sid"])) is None:
        raise NotFound("No such application.", code="application_not_found",
                       details={"application_sid": str(data["application_sid"])})
    if db.scalar(select(PhoneNumber.id).where(PhoneNumber.number == data["from_"])) is None:
        raise ValidationFailed("'from' must be a number this account owns.",
                               code="caller_id_not_owned", details={"from": data["from_"]})
    request = OriginateRequest(
        call_id=uuid.uuid4(), account_id=account_id, trace_id=uuid.uuid4(),
        phone_number=data["to"], caller_id=data["from_"], application_id=data["application_sid"],
        timeout_seconds=data["timeout"])
    emit("call.originate", originate_payload(request), account_id=account_id,
         trace_id=request.trace_id, session=db)
    return {"call_id": request.call_id, "trace_id": request.trace_id, "status": call_state.QUEUED,
            "callId": request.call_id, "traceId": request.trace_id}


def call_view(db: Session, account_id: uuid.UUID, call_id: uuid.UUID,
              live: Optional[call_state.LiveState], now: Optional[float] = None) -> dict[str, Any]:
    """``GET /api/calls/:callId``: the call record decides once it exists; before that the live
    state (``app.calls.call_state``), where a request left queued past the dispatch deadline is
    ``failed``/``no_freeswitch``. Another tenant's call id is 404 like an unknown one."""
    record = db.scalar(select(CallRecord).where(CallRecord.call_id == call_id,
                                                CallRecord.account_id == account_id))
    if record is not None:
        completed = record.status == call_state.COMPLETED
        return {
            "call_id": call_id, "trace_id": record.trace_id,
            "state": call_state.COMPLETED if completed else call_state.FAILED,
            "reason": call_state.reason_from_record(record.status, record.hangup_reason, record.webhook_error),
            "call_record_id": record.public_id, "record_status": record.status,
            "hangup_cause": record.hangup_cause, "direction": record.direction,
            "started_at": record.started_at, "answered_at": record.answered_at,
            "ended_at": record.ended_at,
        }
    if live is None or live.account_id != str(account_id):
        raise NotFound("No such call.", code="call_not_found")
    state, reason = live.state, None
    if state == call_state.QUEUED and live.queued_at is not None and call_state.is_stale(live.queued_at, now):
        state, reason = call_state.FAILED, call_state.NO_FREESWITCH
    return {"call_id": call_id, "trace_id": None, "state": state, "reason": reason,
            "call_record_id": None, "record_status": None, "hangup_cause": None,
            "direction": "outbound", "started_at": None, "answered_at": None, "ended_at": None}
