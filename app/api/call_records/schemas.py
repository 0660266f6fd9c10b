"""Call record query strings and bodies. Records are addressed by ``public_id`` only; the
internal bigint id never leaves the database (not even inside a cursor)."""
from __future__ import annotations

from datetime import timezone
from typing import Any

import marshmallow as ma
from marshmallow import validate

from app.api.common import ListQuerySchema
from app.api.fields import UtcDateTime
from app.models.enums import CALL_DIRECTIONS, CALL_STATUSES

# the console's number search: part of a caller's or callee's number, as phone numbers' search
NUMBER_SEARCH_PATTERN = r"^\+?[0-9]{1,20}\Z"


class CallRecordFilterSchema(ma.Schema):
    from_ = UtcDateTime(data_key="from", attribute="from", default_timezone=timezone.utc,
                        metadata={"description": "started_at >= from (ISO 8601; UTC if no offset)"})
    to = UtcDateTime(default_timezone=timezone.utc,
                     metadata={"description": "started_at < to"})
    direction = ma.fields.String(validate=validate.OneOf(CALL_DIRECTIONS))
    agent_id = ma.fields.UUID()
    queue_id = ma.fields.UUID()
    status = ma.fields.String(validate=validate.OneOf(CALL_STATUSES))
    call_id = ma.fields.UUID(metadata={"description": "the leg's call id (POST /api/calls callId, webhook callId)"})
    number = ma.fields.String(
        validate=validate.Regexp(NUMBER_SEARCH_PATTERN, error="Digits only, optionally with a leading +."),
        metadata={"description": "Only calls whose caller or callee contains these digits (a leading + is ignored)"})

    @ma.post_load
    def _digits(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data.get("number") is not None:
            data["number"] = data["number"].lstrip("+")
        return data
    campaign_id = ma.fields.UUID(metadata={"description": "the calls an outbound campaign placed"})

    @ma.validates_schema
    def _range(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("from") and data.get("to") and data["from"] >= data["to"]:
            raise ma.ValidationError({"to": ["Must be after 'from'."]})


class CallRecordListQuerySchema(ListQuerySchema, CallRecordFilterSchema):
    """The export's filters plus cursor pagination: a list and its export always agree."""


class CallRecordExportQuerySchema(CallRecordFilterSchema):
    """The list's filters, plus the opt-in interaction indicator columns."""
    indicators = ma.fields.Boolean(load_default=False, metadata={
        "description": "append IVR, Connect Latency, ACW, Transfers, Short Abandon, Campaign ID, Contact ID "
                       "after the 18 columns"})


# Three talk_ms, three measures (docs/api.md "Call records"): the record's is the billed time of
# the caller's leg, the summary's and the segment's the conversation with an agent or callee.
RECORD_TALK = ("This leg's answered time: answer until hang-up (FreeSWITCH billmsec), so IVR, queue "
               "wait, hold music and hold included (duration_ms ≈ ring_ms + talk_ms).")
SUMMARY_TALK = ("Conversation time: from the bridge to an agent or dialled party until the end, minus "
                "hold (0 when nobody was bridged); the CSV's Talk column. Not the record's talk_ms.")
SEGMENT_TALK = "This agent's conversation time in its window: bridged until it ended, minus hold."


class InteractionSummarySchema(ma.Schema):
    ivr_ms = ma.fields.Integer()
    queue_wait_ms = ma.fields.Integer()
    connect_latency_ms = ma.fields.Integer(allow_none=True)
    talk_ms = ma.fields.Integer(metadata={"description": SUMMARY_TALK})
    hold_count = ma.fields.Integer()
    hold_ms = ma.fields.Integer()
    acw_ms = ma.fields.Integer()
    aht_ms = ma.fields.Integer()
    transfer_count = ma.fields.Integer()
    abandoned = ma.fields.Boolean()
    short_abandon = ma.fields.Boolean()
    disposition = ma.fields.String(allow_none=True)


class CallRecordSchema(ma.Schema):
    id = ma.fields.UUID(attribute="public_id")
    trace_id = ma.fields.UUID()
    call_id = ma.fields.UUID()
    other_leg_call_id = ma.fields.UUID(allow_none=True)
    direction = ma.fields.String()
    from_number = ma.fields.String(allow_none=True)
    to_number = ma.fields.String(allow_none=True)
    application_id = ma.fields.UUID(allow_none=True)
    carrier_id = ma.fields.UUID(allow_none=True)
    gateway_id = ma.fields.UUID(allow_none=True)
    dial_carrier_id = ma.fields.UUID(allow_none=True)   # answered this leg's last routed dial
    dial_gateway_id = ma.fields.UUID(allow_none=True)
    started_at = ma.fields.AwareDateTime()
    answered_at = ma.fields.AwareDateTime(allow_none=True)
    ended_at = ma.fields.AwareDateTime(allow_none=True)
    ring_ms = ma.fields.Integer()
    talk_ms = ma.fields.Integer(metadata={"description": RECORD_TALK})
    duration_ms = ma.fields.Integer()
    status = ma.fields.String()
    hangup_cause = ma.fields.String(allow_none=True)
    hangup_reason = ma.fields.String(allow_none=True)
    sentiment_score = ma.fields.Float(allow_none=True)
    sentiment_label = ma.fields.String(allow_none=True)
    agent_id = ma.fields.UUID(allow_none=True)
    agent_name = ma.fields.String(allow_none=True, metadata={"description": "the agent's username (null: none, or deleted)"})
    queue_id = ma.fields.UUID(allow_none=True)
    queue_name = ma.fields.String(allow_none=True, metadata={"description": "the queue's name (null: none, or deleted)"})
    campaign_id = ma.fields.UUID(allow_none=True, metadata={"description": "the outbound campaign that placed the call"})
    contact_id = ma.fields.UUID(allow_none=True, metadata={"description": "the campaign contact the call dialled"})
    amd_result = ma.fields.String(allow_none=True, metadata={
        "description": "a campaign call's answering-machine verdict: human, machine, notsure, or none (no verdict: "
                       "the customer hung up first); null when no detection ran"})
    has_recording = ma.fields.Boolean()
    has_transcript = ma.fields.Boolean()
    has_webhook = ma.fields.Boolean()
    has_flow = ma.fields.Boolean()
    recording_url = ma.fields.String(allow_none=True)
    tags = ma.fields.Dict()
    journey = ma.fields.String(allow_none=True)


class InteractionSegmentSchema(ma.Schema):
    """One agent's ownership window of the conversation."""
    agent_id = ma.fields.UUID(allow_none=True)
    agent_name = ma.fields.String(allow_none=True, metadata={
        "description": "the agent's username (null: deleted)"})
    call_id = ma.fields.UUID(allow_none=True)
    started_at = ma.fields.AwareDateTime()
    ended_at = ma.fields.AwareDateTime(allow_none=True)
    talk_ms = ma.fields.Integer(metadata={"description": SEGMENT_TALK})
    hold_ms = ma.fields.Integer()
    acw_ms = ma.fields.Integer()
    handle_ms = ma.fields.Integer()
    transferred = ma.fields.Boolean()
    conferenced = ma.fields.Boolean()


class CallRecordDetailSchema(CallRecordSchema):
    summary = ma.fields.Nested(InteractionSummarySchema, allow_none=True)
    segments = ma.fields.List(ma.fields.Nested(InteractionSegmentSchema))
