"""Calls a dead controller left behind get their call record, usage and ``call.ended``.

Why: a controller killed mid-call (SIGKILL, OOM, a crash) never reaches the session's hang-up
path, so calls that had ``call.started`` (and often ``call.answered``) in the outbox would be
missing from the records and from billing for ever. When a controller starts, and whenever its
link to a switch comes back, it looks for calls that started within the outbox retention, have
no call record, and are not live on this controller, and records each of them:

- **channel gone** (FreeSWITCH hangs a channel up the moment its outbound socket drops, so the
  call ended when its controller died): recorded from what the events saw — start and answer
  times of ``call.started``/``call.answered``, holds of ``call.hold``/``call.resumed`` — ending
  when the lost controller can last have been alive (``ended_by``, ``lost_controller_ended_by``):
  the recovering controller's start, or the lost one's last heartbeat plus one interval when
  that is earlier. So a call is billed at most the restart time (seconds under ``sbc run`` or
  compose) or one heartbeat interval too long, never the whole time a controller stayed down;
  when no bound is later than the call's last event (e.g. a switch reconnect long after this
  controller started), it ends at that last event. The record says it is reconstructed
  (``hangup_reason`` and ``webhook_error`` = ``connection_lost``);
- **channel still on the switch** but driven by no session here: the controller cannot pick a
  call up where a dead session left it (mid-verb, mid-gather, its webhook state gone), so the
  channel is hung up (``uuid_kill`` with ``NORMAL_TEMPORARY_FAILURE``) and recorded from its
  ``call.started`` until now, the moment FreeSWITCH still showed it. A channel whose socket application
  points at another controller is left alone: it is that controller's call.

Each recovered call also gets ``call.failed`` (reason ``connection_lost``) unless it already had
one, and its limiter slot is freed instead of waiting for the TTL. Writing is idempotent (the
call record is unique per call id), so two controllers recovering at once record a call once.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Container, Iterable, Optional

from sqlalchemy import func, select

from app import limits
from app.calls.records import CallContext, WrittenRecord, write_in
from app.db.engine import platform_session, tenant_session
from app.events import payloads
from app.events.exchanges import CALL_EVENTS
from app.events.outbox import publish_in
from app.models import CallRecord, EventOutbox

log = logging.getLogger(__name__)

# Older call.started rows are pruned from the outbox anyway.
RECOVERY_LOOKBACK_SECONDS = limits.EVENT_OUTBOX_RETENTION_SECONDS
LOST_CALL_CAUSE = "NORMAL_TEMPORARY_FAILURE"
LOST_CALL_REASON = "connection_lost"
_LATER_EVENTS = ("call.answered", "call.hold", "call.resumed", "call.failed")


@dataclass
class StartedCall:
    """A call as its outbox events describe it."""
    call_id: str
    trace_id: uuid.UUID
    account_id: uuid.UUID
    started: dict[str, Any]          # the call.started payload
    started_at: datetime
    last_event_at: datetime
    answered_at: Optional[datetime] = None
    holds: list[tuple[datetime, Optional[datetime]]] = field(default_factory=list)
    failed: bool = False             # it already has a call.failed


def unrecorded_calls(exclude: Container[str] = frozenset(), *,
                     lookback_seconds: float = RECOVERY_LOOKBACK_SECONDS) -> list[StartedCall]:
    """Calls with ``call.started`` in the outbox, no call record, and not in ``exclude``."""
    since = datetime.now(timezone.utc) - timedelta(seconds=lookback_seconds)
    with platform_session() as session:
        bodies = session.scalars(select(EventOutbox.body).where(
            EventOutbox.routing_key == "call.started", EventOutbox.created_at >= since)).all()
        calls: dict[str, StartedCall] = {}
        for body in bodies:
            call = _started(body)
            if call is not None and call.call_id not in exclude:
                calls[call.call_id] = call
        if not calls:
            return []
        recorded = session.scalars(select(CallRecord.call_id).where(
            CallRecord.call_id.in_([uuid.UUID(c) for c in calls]))).all()
        for call_id in recorded:
            calls.pop(str(call_id), None)
        if not calls:
            return []
        traces = sorted({str(c.trace_id) for c in calls.values()})
        later = session.execute(
            select(EventOutbox.routing_key, EventOutbox.body)
            .where(EventOutbox.routing_key.in_(_LATER_EVENTS),
                   EventOutbox.body["trace_id"].astext.in_(traces),
                   EventOutbox.created_at >= min(c.started_at for c in calls.values()))
            .order_by(EventOutbox.created_at)).all()
    for key, body in later:
        call = calls.get(str((body.get("payload") or {}).get("callId")))
        if call is not None:
            _apply(call, key, _when(body))
    return sorted(calls.values(), key=lambda c: c.started_at)


def lost_controller_ended_by(own_instance: str, own_started_at: datetime,
                             heartbeat_seconds: float) -> datetime:
    """The latest moment a lost controller can have been alive: this controller's start, or
    the last heartbeat of another controller instance plus one interval when that is earlier."""
    with platform_session() as session:
        last_beat = session.scalar(select(func.max(EventOutbox.created_at)).where(
            EventOutbox.routing_key.in_(("system.service.up", "system.service.heartbeat")),
            EventOutbox.body["payload"]["service"].astext == "controller",
            EventOutbox.body["payload"]["instanceId"].astext != own_instance))
    if last_beat is None:
        return own_started_at
    return min(own_started_at, last_beat + timedelta(seconds=heartbeat_seconds))


def record_lost_call(call: StartedCall, *, channel: Optional[dict[str, Any]] = None,
                     now: Optional[datetime] = None,
                     ended_by: Optional[datetime] = None) -> Optional[WrittenRecord]:
    """Write the record, usage, ``call.failed`` and ``call.ended`` of one lost call in one
    tenant transaction; None when the call was recorded meanwhile (nothing written then).
    ``channel``: its ``show channels`` row when FreeSWITCH still had it (just hung up)."""
    now = now or datetime.now(timezone.utc)
    started_at = call.started_at
    # a channel still up when recovery hung it up lasted until now; otherwise it ended with its
    # controller (``ended_by``), and never before its own last event
    if channel is not None:
        ended_at = now
    elif ended_by is not None and ended_by > call.last_event_at:
        ended_at = min(ended_by, now)
    else:
        ended_at = call.last_event_at
    hangup = LostCallHangup(call, started_at=started_at, ended_at=max(ended_at, started_at))
    payload = call.started
    ctx = CallContext(
        account_id=call.account_id, trace_id=call.trace_id, direction=payload.get("direction"),
        application_id=_uuid(payload.get("applicationSid")),
        from_number=payload.get("from"), to_number=payload.get("to"),
        carrier_id=_uuid(payload.get("carrierId")), gateway_id=_uuid(payload.get("gatewayId")),
        has_webhook=payload.get("handler") in ("webhook", "websocket"),
        has_flow=payload.get("handler") == "flow",
        hangup_reason=LOST_CALL_REASON, webhook_error=LOST_CALL_REASON,
        journey=[payload["handler"]] if payload.get("handler") else [],
    )
    try:
        with tenant_session(call.account_id) as session:
            if not call.failed:
                publish_in(session, CALL_EVENTS, "call.failed", payloads.call_failed(
                    call.call_id, hangup_cause=LOST_CALL_CAUSE, reason=LOST_CALL_REASON),
                    account_id=call.account_id, trace_id=call.trace_id)
            written = write_in(session, hangup, ctx)
            if written is None:
                raise _AlreadyRecorded()  # roll the call.failed back with it
    except _AlreadyRecorded:
        return None
    return written


def recover_lost_calls(live: Container[str], channels: Iterable[tuple[dict[str, Any], Callable[[str], None]]],
                       *, our_socket: str, release: Callable[..., Any] | None = None,
                       ended_by: Optional[datetime] = None,
                       settle: Callable[[], None] | None = None) -> list[WrittenRecord]:
    """Record every unrecorded call that is not live here.

    ``channels``: every channel of every switch, each with a function that hangs it up on its
    switch; ``our_socket``: ``host:port`` this controller's socket application targets.
    ``release``: the limiter's release, to free the lost calls' slots now. ``ended_by``: when
    the lost controller was last possibly alive (``lost_controller_ended_by``). ``settle``:
    called between listing the candidates and checking each against ``live`` (sibling
    processes on our port: wait until they have published the calls they took meanwhile)."""
    on_switch = {row.get("uuid"): (row, hang_up) for row, hang_up in channels}
    written: list[WrittenRecord] = []
    candidates = unrecorded_calls(exclude=live)
    if candidates and settle is not None:
        settle()
    for call in candidates:
        if call.call_id in live:  # it reached this controller while we were looking
            continue
        row: dict[str, Any] | None = None
        found = on_switch.get(call.call_id)
        if found is not None:
            row, hang_up = found
            if _driven_elsewhere(row, our_socket):
                continue
            log.warning("call %s: channel still on FreeSWITCH with no session to drive it; "
                        "hanging it up", call.call_id)
            try:
                hang_up(call.call_id)
            except Exception as exc:  # the link dropped again: the next reconnect retries
                log.warning("call %s: hang-up failed (%s); will retry", call.call_id, exc)
                continue
        record = record_lost_call(call, channel=row, ended_by=ended_by)
        if record is None:
            continue
        written.append(record)
        log.warning("call %s: recorded after its controller was lost (%s, %d ms talk)",
                    call.call_id, record.status, record.facts.talk_ms)
        if release is not None:
            release(call.call_id)
    if written:
        log.warning("recovered %d call(s) left unrecorded by a lost controller", len(written))
    return written


class LostCallHangup:
    """The hang-up of a lost call, read by ``read_hangup`` like CHANNEL_HANGUP_COMPLETE."""

    def __init__(self, call: StartedCall, *, started_at: datetime, ended_at: datetime) -> None:
        answered = call.answered_at
        if answered is not None:
            answered = min(max(answered, started_at), ended_at)
        windows = []
        for held, resumed in call.holds:
            windows.append((_us(held), _us(resumed or ended_at)))
        self._headers = {"Unique-ID": call.call_id, "Hangup-Cause": LOST_CALL_CAUSE,
                         "Caller-Caller-ID-Number": call.started.get("from"),
                         "Caller-Destination-Number": call.started.get("to")}
        self._vars = {
            "start_uepoch": str(_us(started_at)), "end_uepoch": str(_us(ended_at)),
            "answer_uepoch": str(_us(answered)) if answered else "0",
            "hangup_cause": LOST_CALL_CAUSE, "direction": call.started.get("direction") or "inbound",
            "sip_network_ip": call.started.get("sourceIp"),
            "hold_events": "".join(f"{{{a},{b}}}" for a, b in windows) or None,
        }

    def get(self, name: str, default: Optional[str] = None) -> Optional[str]:
        value = self._headers.get(name)
        return default if value is None else value

    def variable(self, name: str, default: Optional[str] = None) -> Optional[str]:
        value = self._vars.get(name)
        return default if value is None else value


class _AlreadyRecorded(Exception):
    """The call got its record meanwhile (its session finished first): nothing to recover."""


def _started(body: dict[str, Any]) -> Optional[StartedCall]:
    payload = body.get("payload") or {}
    call_id, trace, account = payload.get("callId"), body.get("trace_id"), body.get("account")
    if not (call_id and trace and account and _uuid(call_id)):
        return None
    at = _when(body)
    return StartedCall(call_id=str(_uuid(call_id)), trace_id=uuid.UUID(trace),
                       account_id=uuid.UUID(account), started=payload, started_at=at,
                       last_event_at=at)


def _apply(call: StartedCall, key: str, at: datetime) -> None:
    call.last_event_at = max(call.last_event_at, at)
    if key == "call.answered" and call.answered_at is None:
        call.answered_at = at
    elif key == "call.hold":
        call.holds.append((at, None))
    elif key == "call.resumed" and call.holds and call.holds[-1][1] is None:
        call.holds[-1] = (call.holds[-1][0], at)
    elif key == "call.failed":
        call.failed = True


def _driven_elsewhere(row: dict[str, Any], our_socket: str) -> bool:
    """True when the channel sits in a socket application aimed at another controller."""
    if row.get("application") != "socket":
        return False
    target = (row.get("application_data") or "").split(" ", 1)[0]
    return bool(target) and target != our_socket


def _when(body: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(str(body["occurred_at"]).replace("Z", "+00:00"))


def _us(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000)


def _uuid(value: Any) -> Optional[uuid.UUID]:
    try:
        return uuid.UUID(str(value)) if value else None
    except ValueError:
        return None
