"""The call record, its interaction summary, the usage meters and ``call.ended`` — one
tenant transaction per finished leg.

Why one transaction: the CDR, the derived indicators, the billing meter and the bus event
must agree. Either all are written or none is; the event goes through the outbox
(``publish_in``) so a broker outage cannot lose it or block the hangup path.
Writing is idempotent per leg (``call_records.call_id`` is unique): a repeated
CHANNEL_HANGUP_COMPLETE (reconnect replay) writes nothing twice and publishes nothing twice.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from app.calls.hangup import HangupFacts, HeaderSource, call_status, read_hangup
from app.calls.interaction_times import InteractionTimes
from app.calls.usage import meter_call
from app.contact.interactions import close_segment_in, segments_acw
from app.db.engine import tenant_session
from app.events.envelope import rfc3339
from app.events.exchanges import CALL_EVENTS
from app.events.outbox import publish_in
from app.models import Account, CallRecord, InteractionSummary
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
    if bridged_at is not None:
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
        "transfer_count": ctx.transfer_count,
        "abandoned": abandoned,
        "short_abandon": abandoned and queue_wait_ms < times.short_abandon_seconds * 1000,
        "disposition": ctx.disposition,
    }


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
    }


_SUMMARIES = InteractionSummary.__table__
_SUMMARY_PARAM = "s_"  # bind names apart from the column names (SQLAlchemy reserves those)
_summary_upserts: dict[tuple[str, ...], Any] = {}


def _summary_upsert(keys: tuple[str, ...]) -> Any:
    """The upsert for a summary with these keys, built once per key set: building it per call
    (``.values(**row)``, and ``excluded``, which copies the table's columns and registers
    listeners for each) cost more CPU than the statement, and grew SQLAlchemy's event registry
    with every call."""
    stmt = _summary_upserts.get(keys)
    if stmt is not None:
        return stmt
    cols = _SUMMARIES.c

    def param(name: str) -> Any:
        return bindparam(_SUMMARY_PARAM + name, type_=cols[name].type)

    acw = segments_acw(param("trace_id")) + param("acw_ms")
    values = {**{k: param(k) for k in keys}, "id": param("id"), "account_id": param("account_id"),
              "trace_id": param("trace_id"), "acw_ms": acw,
              "aht_ms": param("talk_ms") + param("hold_ms") + acw}
    insert_ = pg_insert(_SUMMARIES).values(values)
    ex, cur = insert_.excluded, cols
    acw_after = func.greatest(cur.acw_ms, ex.acw_ms)
    stmt = insert_.on_conflict_do_update(
        index_elements=[cols.trace_id],
        set_={
            "ivr_ms": func.greatest(cur.ivr_ms, ex.ivr_ms),
            "queue_wait_ms": func.greatest(cur.queue_wait_ms, ex.queue_wait_ms),
            "connect_latency_ms": func.coalesce(ex.connect_latency_ms, cur.connect_latency_ms),
            "talk_ms": cur.talk_ms + ex.talk_ms,
            "hold_count": cur.hold_count + ex.hold_count,
            "hold_ms": cur.hold_ms + ex.hold_ms,
            "acw_ms": acw_after,
            "aht_ms": cur.talk_ms + ex.talk_ms + cur.hold_ms + ex.hold_ms + acw_after,
            "transfer_count": cur.transfer_count + ex.transfer_count,
            "abandoned": ex.abandoned,
            "short_abandon": ex.short_abandon,
            "disposition": func.coalesce(ex.disposition, cur.disposition),
            "updated_at": func.now(),
        },
    )
    _summary_upserts[keys] = stmt
    return stmt


def _upsert_summary(session: Session, ctx: CallContext, summary: dict[str, Any]) -> None:
    """One row per conversation: a second leg of the same trace adds its talk/hold/transfers
    and keeps the longest IVR and queue wait. After-call work is the sum of the trace's agent
    windows (interaction_segment), whether the wrap-up ended before or after this write."""
    keys = tuple(k for k in summary if k not in ("acw_ms", "aht_ms"))
    params = {_SUMMARY_PARAM + k: v for k, v in summary.items()}
    params.update({_SUMMARY_PARAM + "id": uuid.uuid4(),
                   _SUMMARY_PARAM + "account_id": ctx.account_id,
                   _SUMMARY_PARAM + "trace_id": ctx.trace_id})
    session.connection().execute(_summary_upsert(keys), params)


def _close_segment(session: Session, facts: HangupFacts, ctx: CallContext, summary: dict[str, Any]) -> None:
    """The agent's window on this leg (a queue call the agent answered): talk and hold."""
    times = ctx.interaction
    started = times.connected_at or facts.bridged_at
    if ctx.agent_id is None or started is None:
        return
    close_segment_in(session, ctx.account_id, ctx.trace_id, uuid.UUID(facts.call_id), ctx.agent_id,
                     times.segment_id, started, facts.ended_at, summary["talk_ms"], summary["hold_ms"])


# Built once, executed with the row as parameters: building the statement per call (ORM insert,
# ``.values(**row)`` and its cache key) cost more CPU than the insert.
_RECORDS = CallRecord.__table__
_INSERT_RECORD = (pg_insert(_RECORDS).on_conflict_do_nothing(index_elements=[_RECORDS.c.call_id])
                  .returning(_RECORDS.c.id))


def write_in(session: Session, event: HeaderSource, ctx: CallContext) -> WrittenRecord | None:
    """Write everything inside the caller's tenant transaction; None when this leg was
    already recorded (nothing else is written then)."""
    facts = read_hangup(event)
    status = call_status(facts, refused=ctx.refused)
    values = _record_values(facts, ctx, status)
    inserted = session.connection().execute(_INSERT_RECORD, values).first()
    if inserted is None:
        return None
    summary = summarise(facts, ctx)
    if ctx.interaction.connected_at is not None:  # only calls an agent answered
        _close_segment(session, facts, ctx, summary)
    _upsert_summary(session, ctx, summary)
    event_id = publish_in(session, CALL_EVENTS, "call.ended", ended_payload(values, summary),
                          account_id=ctx.account_id, trace_id=ctx.trace_id)
    # last: the account's meter rows are locked until commit, and every call of the account
    # waits on that lock, so it is held for the commit alone
    sp_id = ctx.service_provider_id or session.scalar(
        select(Account.service_provider_id).where(Account.id == ctx.account_id))
    if sp_id is not None:
        meter_call(session, ctx.account_id, sp_id, facts.talk_ms, facts.ended_at)
    return WrittenRecord(values["public_id"], status, event_id, facts, summary)


def write_call_record(event: HeaderSource, ctx: CallContext) -> WrittenRecord | None:
    """The hangup path's entry point: its own tenant transaction (RLS scoped to the account)."""
    with tenant_session(ctx.account_id) as session:
        written = write_in(session, event, ctx)
    if written is not None:
        CALLS_FINISHED.labels(written.status, ctx.direction).inc()
    return written
