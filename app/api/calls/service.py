"""Placing an outbound call: checks that need the tenant's data, then ``call.originate``.

Why through the bus: the API has no ESL link; whichever controller takes the message dials it
(least-cost routing, concurrency limits), and the call record and events follow from there.
The message is written to the outbox in the request's own transaction, so a 202 means it will
be dialled even if RabbitMQ is briefly away.
"""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.calls.originate import OriginateRequest, originate_payload
from app.errors import NotFound, ValidationFailed
from app.events.payloads import emit
from app.models import Application, PhoneNumber


def place_call(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> dict[str, Any]:
    if db.scalar(select(Application.id).where(Application.id == data["applicationSid"])) is None:
        raise NotFound("No such application.", code="application_not_found",
                       details={"applicationSid": str(data["applicationSid"])})
    if db.scalar(select(PhoneNumber.id).where(PhoneNumber.number == data["from_"])) is None:
        raise ValidationFailed("'from' must be a number this account owns.",
                               code="caller_id_not_owned", details={"from": data["from_"]})
    request = OriginateRequest(
        call_id=uuid.uuid4(), account_id=account_id, trace_id=uuid.uuid4(),
        phone_number=data["to"], caller_id=data["from_"], application_id=data["applicationSid"],
        timeout_seconds=data["timeout"])
    emit("call.originate", originate_payload(request), account_id=account_id,
         trace_id=request.trace_id, session=db)
    return {"callId": request.call_id, "traceId": request.trace_id, "status": "queued"}
