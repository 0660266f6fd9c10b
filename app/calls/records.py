"""The call record, its interaction summary, the usage meters and ``call.ended`` — one
tenant transaction per finished leg.

Why one transaction: the CDR, the derived indicators, the billing meter and the bus event
must agree. Either all are written or none is; the event goes through the outbox (a row in
the same transaction) so a broker outage cannot lose it or block the hangup path.
Writing is idempotent per leg (``call_records.call_id`` is unique): a repeated
CHANNEL_HANGUP_COMPLETE (reconnect replay) writes nothing twice and publishes nothing twice.

Everything is computed here first, then written by one prebuilt script (app/calls/record_sql.py)
in one execute: on the hang-up path that is one round trip for the whole transaction.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.calls.hangup import HangupFacts, HeaderSource, call_status, read_hangup
from app.calls.interaction_times import InteractionTimes
from app.calls.record_sql import RECORD_COLUMNS, WRITE_AGENT_LEG, WRITE_LEG
from app.calls.usage import PRODUCT_CALLS, PRODUCT_MINUTES, billable_minutes, month_start
from app.db.engine import run_as_tenant
from app.events.envelope import rfc3339
from app.events.exchanges import CALL_EVENTS
from app.events.outbox import event_row, wake_after_commit, wake_now
from app.ops.metrics import CALLS_FINISHED


@dataclass
class CallContext:
    """What the call session knows that FreeSWITCH does not. Only ``account_id`` and
    ``trace_id`` are required; ``None`` fields fall back to the hangup event's values."""
    account_id: uuid.UUID
    trace_id: uuid.UUID
    direction: str | None = None                 # inbound | outbound (the product's view)
    service_provider_id: uuid.UUID | None = None  # looked up from the account when None
    application_id: uuid.UUID | None = None
    from_number: str | None = None
    to_number: str | None = None
    other_leg_call_id: uuid.UUID | None = None
    carrier_id: uuid.UUID | None = None
    gateway_id: uuid.UUID | None = None
    dial_carrier_id: uuid.UUID | None = None      # answered this leg's last routed dial
    dial_gateway_id: uuid.UUID | None = None
    agent_id: uuid.UUID | None = None
    queue_id: uuid.UUID | None = None
    has_recording: bool = False
    has_transcript: bool = False
    has_webhook: bool = False
    has_flow: bool = False
    recording_url: str | None = None
    tags: dict[str, Any] = field(default_factory=dict)
    hangup_reason: str | None = None             # from the hangup verb
    webhook_error: str | None = None
    journey: list[str] = field(default_factory=list)  # e.g. ["ivr", "queue:sales", "agent:alice"]
    refused: bool = False                        # turned away by the concurrency limiter
    # interaction indicators the session measured (None: derive from the event)
    ivr_ms: int | None = None
    queue_wait_ms: int = 0
    connect_latency_ms: int | None = None
    acw_ms: int = 0
    transfer_count: int = 0
    disposition: str | None = None
    # a campaign call's answering-machine detection (app/voice/amd.py Screening.report): on
    # call.ended only, for the dialer (the attempt's outcome) and listeners
    amd: dict[str, Any] | None = None
    # stamped live by the queue verb and the session (queue join/leave, offer, agent answer, holds)
    interaction: InteractionTimes = field(default_factory=InteractionTimes)


@dataclass(frozen=True)
class WrittenRecord:
    public_id: uuid.UUID
    status: str
    event_id: uuid.UUID          # the call.ended outbox id
    facts: HangupFacts
    summary: dict[str, Any]


def _ms(delta) -> int:
    return round(delta.total_seconds() * 1000)


def summarise(facts: HangupFacts, ctx: CallContext) -> dict[str, Any]:
    """Interaction indicators for this leg (column names of interaction_summary).
    - ivr: answered until the caller joined a queue, else until bridged (a dial) or the end
    - queue wait: joined until the agent answered (or the caller left the line)
    - connect latency: the accepted offer until the agent answered
    - talk: time connected to another party (bridged), minus hold; 0 for IVR-only calls
    - hold: the leg's hold windows (FreeSWITCH ``hold_events``) or the CHANNEL_HOLD/UNHOLD
      the session saw (``uuid_hold`` fires those without updating ``hold_events``)
    - aht: talk + hold + after-call work (the agent's wrap-up, added when it ends)
    - abandoned: the caller hung up in the queue, never connected to an agent; short when
      that took less than the queue's ``short_abandon_seconds``"""
    times = ctx.interaction
    answered_ms = facts.talk_ms
    bridged_at = facts.bridged_at or times.connected_at
    if ctx.ivr_ms is not None:
        ivr_ms = ctx.ivr_ms
    elif facts.answered_at is not None:
        if times.queue_joined_at is not None:
            ivr_ms = _ms(times.queue_joined_at - facts.answered_at)
        else:
            ivr_ms = _ms((bridged_at or facts.ended_at) - facts.answered_at) - ctx.queue_wait_ms
    else:
        ivr_ms = 0
    ivr_ms = max(0, ivr_ms)
    queue_wait_ms = ctx.queue_wait_ms
    if times.queue_joined_at is not None:
        queue_wait_ms = times.ms_between(
            times.queue_joined_at, times.connected_at or times.queue_left_at or facts.ended_at) or 0
    connect_latency_ms = ctx.connect_latency_ms
    if connect_latency_ms is None:
        connect_latency_ms = times.ms_between(times.offered_at, times.connected_at)
    hold_count = max(facts.hold_count, times.holds)
    hold_ms = max(facts.hold_ms, times.held_ms)
    if times.windows_closed:  # the closed windows' talk, then the talk since the last one closed
        talk_ms = times.talk_before_ms + _talk_since_transfer(facts, times, hold_ms)
    elif bridged_at is not None:
        talk_ms = _ms(facts.ended_at - bridged_at) - hold_ms
    else:
        talk_ms = 0
    talk_ms = max(0, min(talk_ms, answered_ms))
    if times.queue_joined_at is not None:
        abandoned = times.queue_result == "hangup"
    else:
        abandoned = ctx.queue_id is not None and ctx.agent_id is None and bridged_at is None
    acw_ms = max(0, ctx.acw_ms)
    return {
        "ivr_ms": ivr_ms,
        "queue_wait_ms": max(0, queue_wait_ms),
        "connect_latency_ms": connect_latency_ms,
        "talk_ms": talk_ms,
        "hold_count": hold_count,
        "hold_ms": hold_ms,
        "acw_ms": acw_ms,
        "aht_ms": talk_ms + hold_ms + acw_ms,
        "transfer_count": ctx.transfer_count + times.transfers,
        "abandoned": abandoned,
        "short_abandon": abandoned and queue_wait_ms < times.short_abandon_seconds * 1000,
        "disposition": ctx.disposition,
    }


def _talk_since_transfer(facts: HangupFacts, times: InteractionTimes, hold_ms: int) -> int:
    """Talk after the last blind transfer: from the next agent's answer, or from the bridge
    of a dialled target (FreeSWITCH stamps the leg's bridge time at each bridge), minus the
    holds since; 0 when nobody answered."""
    since = times.segment_started_at or times.talk_resumed_at
    if since is None and facts.bridged_at is not None and times.transferred_at is not None \
            and facts.bridged_at > times.transferred_at:
        since = facts.bridged_at
    if since is None:
        return 0
    return max(0, _ms(facts.ended_at - since) - max(0, hold_ms - times.segment_hold_base_ms))


def segment_figures(times: InteractionTimes, ended_at: datetime, summary: dict[str, Any]) -> dict[str, Any]:
    """The current agent's window (``seg_`` parameters): from when that agent answered (the
    first agent's window is the leg's, a later one's starts at its own answer) to the end,
    with the holds since it began."""
    started = times.segment_started_at
    if not times.windows_closed or started is None:
        return {"seg_started_at": times.connected_at, "seg_talk_ms": summary["talk_ms"],
                "seg_hold_ms": summary["hold_ms"]}
    hold_ms = max(0, summary["hold_ms"] - times.segment_hold_base_ms)
    since = times.segment_joined_at or started  # a three-way call's agent: from its joining
    return {"seg_started_at": since, "seg_hold_ms": hold_ms,
            "seg_talk_ms": max(0, _ms(ended_at - since) - hold_ms)}


def _opt(value: Any) -> str | None:
    return str(value) if value is not None else None


def ended_payload(record: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """Payload of ``call.ended`` (docs/events.md)."""
    def ts(v):
        return rfc3339(v) if v is not None else None
    return {
        "callId": str(record["call_id"]),
        "callRecordSid": str(record["public_id"]),
        "direction": record["direction"],
        "from": record["from_number"],
        "to": record["to_number"],
        "applicationSid": str(record["application_id"]) if record["application_id"] else None,
        "carrierId": _opt(record["carrier_id"]),
        "gatewayId": _opt(record["gateway_id"]),
        "dialCarrierId": _opt(record["dial_carrier_id"]),
        "dialGatewayId": _opt(record["dial_gateway_id"]),
        "status": record["status"],
        "hangupCause": record["hangup_cause"],
        "hangupCauseQ850": record["hangup_cause_q850"],
        "hangupReason": record["hangup_reason"],
        "startedAt": ts(record["started_at"]),
        "answeredAt": ts(record["answered_at"]),
        "endedAt": ts(record["ended_at"]),
        "ringMs": record["ring_ms"],
        "talkMs": record["talk_ms"],
        "durationMs": record["duration_ms"],
        "holdCount": summary["hold_count"],
        "holdMs": summary["hold_ms"],
        "agentId": str(record["agent_id"]) if record["agent_id"] else None,
        "queueId": str(record["queue_id"]) if record["queue_id"] else None,
        "abandoned": summary["abandoned"],
        "tags": record["tags"],
        "amd": record.get("amd"),
    }


def _record_values(facts: HangupFacts, ctx: CallContext, status: str) -> dict[str, Any]:
    return {
        "public_id": uuid.uuid4(),
        "account_id": ctx.account_id,
        "trace_id": ctx.trace_id,
        "call_id": uuid.UUID(facts.call_id),
        "other_leg_call_id": ctx.other_leg_call_id,
        "direction": ctx.direction or facts.direction,
        "from_number": ctx.from_number if ctx.from_number is not None else facts.caller,
        "to_number": ctx.to_number if ctx.to_number is not None else facts.callee,
        "sip_call_id": facts.sip_call_id,
        "application_id": ctx.application_id,
        "carrier_id": ctx.carrier_id,
        "gateway_id": ctx.gateway_id,
        "dial_carrier_id": ctx.dial_carrier_id,
        "dial_gateway_id": ctx.dial_gateway_id,
        "source_ip": facts.source_ip,
        "started_at": facts.started_at,
        "answered_at": facts.answered_at,
        "ended_at": facts.ended_at,
        "ring_ms": facts.ring_ms,
        "talk_ms": facts.talk_ms,
        "duration_ms": facts.duration_ms,
        "status": status,
        "hangup_cause": facts.hangup_cause,
        "hangup_cause_q850": facts.hangup_cause_q850,
        "hangup_disposition": facts.hangup_disposition,
        "hangup_reason": ctx.hangup_reason,
        "agent_id": ctx.agent_id,
        "queue_id": ctx.queue_id,
        "has_recording": ctx.has_recording,
        "has_transcript": ctx.has_transcript,
        "has_webhook": ctx.has_webhook,
        "has_flow": ctx.has_flow,
        "recording_url": ctx.recording_url,
        "webhook_error": ctx.webhook_error,
        "tags": dict(ctx.tags),
        "journey": " > ".join(ctx.journey) if ctx.journey else None,
        "amd": ctx.amd,  # not a column: call.ended's only
    }


def _write_params(values: dict[str, Any], facts: HangupFacts, ctx: CallContext,
                  summary: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """The parameters of the write's script (app/calls/record_sql.py): the record's columns,
    the summary's (``s_``), the agent's window (``seg_``), the outbox row (``ev_``) and the
    meters (``m_``). Ids go as text and JSON as its text: psycopg2 adapts neither uuid.UUID nor
    dicts by itself."""
    params = {c: values[c] for c in RECORD_COLUMNS}
    for c in ("public_id", "account_id", "trace_id", "call_id", "other_leg_call_id",
              "application_id", "carrier_id", "gateway_id", "dial_carrier_id", "dial_gateway_id",
              "agent_id", "queue_id"):
        params[c] = _opt(params[c])
    params["tags"] = json.dumps(values["tags"])
    params.update({"s_" + k: v for k, v in summary.items()})
    params["s_id"] = str(uuid.uuid4())
    params["seg_id"] = str(ctx.interaction.segment_id or uuid.uuid4())
    params.update(segment_figures(ctx.interaction, facts.ended_at, summary))
    params.update({"ev_id": str(event["id"]), "ev_exchange": event["exchange"],
                   "ev_routing_key": event["routing_key"], "ev_body": json.dumps(event["body"]),
                   "ev_created_at": event["created_at"], "ev_attempts": event["attempts"]})
    params.update({"m_period": month_start(facts.ended_at),
                   "m_service_provider_id": _opt(ctx.service_provider_id),
                   "m_calls_id": str(uuid.uuid4()), "m_calls_product": PRODUCT_CALLS, "m_calls": 1,
                   "m_minutes_id": str(uuid.uuid4()), "m_minutes_product": PRODUCT_MINUTES,
                   "m_minutes": billable_minutes(facts.talk_ms)})
    return params


def _prepare(event: HeaderSource, ctx: CallContext) -> tuple[str, dict[str, Any], WrittenRecord]:
    """The script, its parameters and what it writes, computed before any round trip."""
    facts = read_hangup(event)
    status = call_status(facts, refused=ctx.refused)
    values = _record_values(facts, ctx, status)
    summary = summarise(facts, ctx)
    ended = event_row(CALL_EVENTS, "call.ended", ended_payload(values, summary),
                      account_id=ctx.account_id, trace_id=ctx.trace_id)
    # the agent's window only on calls an agent answered (after a blind transfer: that an agent
    # answered since, the earlier windows were closed by the transfer)
    times = ctx.interaction
    agent_leg = ctx.agent_id is not None and times.connected_at is not None \
        and not (times.windows_closed and times.segment_started_at is None)
    script = WRITE_AGENT_LEG if agent_leg else WRITE_LEG
    written = WrittenRecord(values["public_id"], status, ended["id"], facts, summary)
    return script, _write_params(values, facts, ctx, summary, ended), written


def write_in(session: Session, event: HeaderSource, ctx: CallContext) -> WrittenRecord | None:
    """Write everything inside the caller's tenant transaction (lost-call recovery); None when
    this leg was already recorded (nothing else is written then)."""
    script, params, written = _prepare(event, ctx)
    if not session.connection().exec_driver_sql(script, params).scalar():
        return None
    wake_after_commit(session)
    return written


def write_call_record(event: HeaderSource, ctx: CallContext) -> WrittenRecord | None:
    """The hangup path's entry point: its own tenant transaction (RLS scoped to the account),
    one round trip (``run_as_tenant``)."""
    script, params, written = _prepare(event, ctx)
    if not run_as_tenant(ctx.account_id, script, params)[0]:
        return None
    wake_now()
    CALLS_FINISHED.labels(written.status, ctx.direction).inc()
    return written
