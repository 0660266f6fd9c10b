"""Bodies of POST /api/calls (camelCase like the webhook and the verbs it leads to)."""
from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.api.callbacks.schemas import PhoneNumberField


class CallCreateSchema(ma.Schema):
    to = PhoneNumberField(required=True, metadata={"description": "Number to dial (LCR applies)"})
    from_ = PhoneNumberField(required=True, data_key="from",
                             metadata={"description": "Caller id; a number the account owns"})
    applicationSid = ma.fields.UUID(required=True, metadata={
        "description": "The application that drives the call once answered"})
    timeout = ma.fields.Integer(
        load_default=limits.DIAL_DEFAULT_RING_TIMEOUT_SECONDS, strict=True,
        validate=validate.Range(min=1, max=limits.DIAL_MAX_RING_TIMEOUT_SECONDS),
        metadata={"description": "Ring timeout in seconds"})


class CallQueuedSchema(ma.Schema):
    callId = ma.fields.UUID(metadata={"description": "The new leg's id (webhook callId)"})
    traceId = ma.fields.UUID(metadata={"description": "The conversation id (call record trace_id)"})
    status = ma.fields.String(metadata={"description": "queued"})


class CallStateSchema(ma.Schema):
    """GET /api/calls/:callId (snake_case, like every other resource: docs/api.md "Conventions")."""
    call_id = ma.fields.UUID()
    trace_id = ma.fields.UUID(allow_none=True)
    state = ma.fields.String(metadata={"description": "queued, ringing, in-progress, completed, failed"})
    reason = ma.fields.String(allow_none=True, metadata={
        "description": "why it failed (no_freeswitch, no_route, caller_id_not_owned, busy, no_answer, ...); "
                       "the call record's hangup_reason"})
    call_record_id = ma.fields.UUID(allow_none=True, metadata={"description": "GET /api/call-records/:id"})
    record_status = ma.fields.String(allow_none=True)
    hangup_cause = ma.fields.String(allow_none=True)
    direction = ma.fields.String()
    started_at = ma.fields.AwareDateTime(allow_none=True)
    answered_at = ma.fields.AwareDateTime(allow_none=True)
    ended_at = ma.fields.AwareDateTime(allow_none=True)
