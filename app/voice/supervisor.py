"""The controller side of supervisor listen / whisper / barge: ``call.supervise`` commands.

Why this shape (vocabulary and the FreeSWITCH mapping: app/calls/supervision.py):
- One durable queue shared by every controller, like ``call.originate``: whichever controller
  takes a command acts on the switch that holds the call, found by ``uuid_exists`` on each
  connected switch (every controller links every switch), so no controller needs to own the
  call's socket.
- **start**: ``bgapi originate {origination_uuid=<supervision id>,eavesdrop_*}<endpoint>
  &eavesdrop(<callId>)`` on that switch. The supervisor's phone rings; the job answers ``+OK``
  when it is answered and eavesdrop runs, then ``call.control.start``. The supervisor's leg is
  not a call of the account (no record, no limiter slot): it is a listener on the call.
- The controller that started it watches the supervisor's leg (``uuid_exists`` every
  ``SUPERVISION_POLL_SECONDS``). It ends when the supervisor hangs up, when the call ends
  (eavesdrop returns once its target is gone, and the originated leg has nothing left to run),
  or on **stop** (``uuid_kill``). Then ``call.control.stop`` with the reason.
- **mode**: ``sendevent`` with the supervisor leg's ``Unique-ID`` and ``eavesdrop-command``:
  eavesdrop switches its mix flags in place; the stop/start pair closes one mode segment and
  opens the next.
- ``agent.supervisor.coaching`` when whispering starts and when it ends.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Optional

import gevent
import gevent.pool
import redis

from app import limits
from app.calls import supervision as sv
from app.events import payloads, work_queues
from app.events.consumer import EventConsumer, SeenIds
from app.events.envelope import Envelope
from app.verbs.fsargs import quote_arg
from esl.errors import EslError
from esl.inbound import InboundConnection

log = logging.getLogger(__name__)

MAX_SUPERVISIONS_IN_FLIGHT = 500
RESULT_MARGIN_SECONDS = 15.0
STOP_CAUSE = "NORMAL_CLEARING"
# stop reasons (call.control.stop "reason")
REASON_STOPPED, REASON_CALL_ENDED, REASON_HUNG_UP = "stopped", "call_ended", "supervisor_hung_up"
REASON_MODE_CHANGED, REASON_NOT_ANSWERED = "mode_changed", "supervisor_not_answered"
REASON_NO_SWITCH = "no_freeswitch"
_STOPPED_TTL_SECONDS = 120

Emit = Callable[..., object]


class Supervisor:
    """Executes ``call.supervise`` commands (explicit action registry)."""

    def __init__(self, client: redis.Redis, prefix: str, nodes: Callable[[], list[InboundConnection]],
                 emit: Emit = payloads.emit, poll_seconds: float = limits.SUPERVISION_POLL_SECONDS) -> None:
        self.redis = client
        self.prefix = prefix
        self.nodes = nodes
        self.emit = emit
        self.poll_seconds = poll_seconds
        self._actions: dict[str, Callable[[dict, Envelope], None]] = {
            sv.START: self._start, sv.MODE: self._mode, sv.STOP: self._stop}

    def handle(self, envelope: Envelope) -> None:
        p = envelope.payload if isinstance(envelope.payload, dict) else {}
        action = self._actions.get(str(p.get("action")))
        if action is None or not p.get("supervisionId") or not p.get("callId") or not envelope.account:
            log.warning("call.supervise %s ignored: unusable payload %r", envelope.id, p)
            return
        try:
            action(p, envelope)
        except EslError as exc:  # the switch went away mid-command: the watcher or the TTL ends it
            log.warning("call.supervise %s (%s) on call %s failed: %s", envelope.id, p.get("action"),
                        p.get("callId"), exc)

    # -- actions -------------------------------------------------------------------------------
    def _start(self, p: dict, envelope: Envelope) -> None:
        call_id, sid, mode = p["callId"], p["supervisionId"], p.get("mode")
        if mode not in sv.MODES or not p.get("endpoint"):
            log.warning("call.supervise start %s: bad mode or endpoint", sid)
            return
        node = self._node_holding(call_id)
        if node is None:
            self._failed(p, envelope, REASON_CALL_ENDED if self._any_connected() else REASON_NO_SWITCH)
            return
        variables = {"origination_uuid": sid, sv.SUPERVISION_VARIABLE: sid,
                     "origination_caller_id_name": "Supervisor", "origination_caller_id_number": "0000",
                     "originate_timeout": str(p.get("timeoutSeconds") or limits.SUPERVISOR_RING_SECONDS),
                     **sv.eavesdrop_variables(mode)}
        dial = "{" + ",".join(f"{k}={v}" for k, v in variables.items()) + "}" + p["endpoint"]
        if any(ch.isspace() or ch == "'" for ch in dial):
            log.error("call.supervise start %s: unusable endpoint %r", sid, p["endpoint"])
            self._failed(p, envelope, REASON_NOT_ANSWERED)
            return
        command = f"originate {dial} {quote_arg(f'&eavesdrop({call_id})')}"
        job = node.bgapi(command)
        timeout = (p.get("timeoutSeconds") or limits.SUPERVISOR_RING_SECONDS) + RESULT_MARGIN_SECONDS
        body = job.result(timeout=timeout).strip()
        if not body.startswith("+OK"):
            cause = body[len("-ERR"):].strip() if body.startswith("-ERR") else body[:60]
            log.info("supervision %s on call %s: supervisor not reached (%s)", sid, call_id, cause)
            self._failed(p, envelope, REASON_STOPPED if self._was_stopped(sid) else REASON_NOT_ANSWERED,
                         cause=cause)
            return
        record = self._record(p)
        if record is not None:
            sv.save_supervision(self.redis, self.prefix, _replace(record, state=sv.ACTIVE, mode=mode,
                                                                  started=time.time()))
        started = time.monotonic()
        self._segment_start(p, envelope, mode)
        log.info("supervision %s: %s on call %s (agent %s)", sid, mode, call_id, p.get("agentId"))
        self._watch(node, p, envelope, started)

    def _mode(self, p: dict, envelope: Envelope) -> None:
        sid, mode = p["supervisionId"], p.get("mode")
        record = self._record(p)
        if mode not in sv.MODES or record is None or record.id != sid or record.state != sv.ACTIVE:
            log.info("call.supervise mode %s ignored: supervision not active", sid)
            return
        if record.mode == mode:
            return
        node = self._node_holding(sid)
        if node is None:
            return
        reply = node.sendevent("CUSTOM", [("Unique-ID", sid), ("Event-Subclass", "sbc::supervise"),
                                          ("eavesdrop-command", sv.eavesdrop_command(mode))])
        if not reply.startswith("+OK"):
            log.warning("supervision %s: mode %s refused by the switch: %s", sid, mode, reply)
            return
        previous = record.mode
        sv.save_supervision(self.redis, self.prefix, _replace(record, mode=mode, started=time.time()))
        self._segment_stop(p, envelope, previous, REASON_MODE_CHANGED, _elapsed_ms(record.started))
        self._segment_start(p, envelope, mode)

    def _stop(self, p: dict, envelope: Envelope) -> None:
        sid = p["supervisionId"]
        self.redis.set(_stopped_key(self.prefix, sid), "1", ex=_STOPPED_TTL_SECONDS)
        node = self._node_holding(sid)
        if node is not None:  # its watcher reports the end (call.control.stop, reason stopped)
            node.api(f"uuid_kill {sid} {STOP_CAUSE}")
        else:  # no leg anywhere (its controller died meanwhile): only the record is left
            sv.drop_supervision(self.redis, self.prefix, p["callId"], p.get("supervisorId") or "", sid)

    # -- the supervisor's leg ------------------------------------------------------------------
    def _watch(self, node: InboundConnection, p: dict, envelope: Envelope, started: float) -> None:
        sid, call_id = p["supervisionId"], p["callId"]
        while True:
            gevent.sleep(self.poll_seconds)
            try:
                if node.api(f"uuid_exists {sid}").strip() != "true":
                    break
            except EslError:  # the switch went away: its channels with it
                break
        record = self._record(p)
        mode = record.mode if record is not None and record.id == sid else p["mode"]
        segment_started = record.started if record is not None and record.id == sid else None
        if self._was_stopped(sid):
            reason = REASON_STOPPED
        else:
            try:
                alive = node.api(f"uuid_exists {call_id}").strip() == "true"
            except EslError:
                alive = False
            reason = REASON_HUNG_UP if alive else REASON_CALL_ENDED
        sv.drop_supervision(self.redis, self.prefix, call_id, p.get("supervisorId") or "", sid)
        duration = _elapsed_ms(segment_started) if segment_started else int((time.monotonic() - started) * 1000)
        self._segment_stop(p, envelope, mode, reason, duration)
        log.info("supervision %s on call %s ended: %s", sid, call_id, reason)

    def _node_holding(self, uuid: str) -> Optional[InboundConnection]:
        for node in self.nodes():
            if not node.connected:
                continue
            try:
                if node.api(f"uuid_exists {uuid}").strip() == "true":
                    return node
            except EslError:
                continue
        return None

    def _any_connected(self) -> bool:
        return any(node.connected for node in self.nodes())

    def _record(self, p: dict) -> Optional[sv.Supervision]:
        return sv.read_supervision(self.redis, self.prefix, p["callId"], p.get("supervisorId") or "")

    def _was_stopped(self, sid: str) -> bool:
        return bool(self.redis.exists(_stopped_key(self.prefix, sid)))

    def _failed(self, p: dict, envelope: Envelope, reason: str, cause: str = "") -> None:
        """The supervisor never joined: the record goes, and a stop (no start before it) says why."""
        sv.drop_supervision(self.redis, self.prefix, p["callId"], p.get("supervisorId") or "",
                            p["supervisionId"])
        self._publish(envelope, "call.control.stop", payloads.call_control(
            p["callId"], supervision_id=p["supervisionId"], supervisor_id=p.get("supervisorId"),
            agent_id=p.get("agentId"), mode=p.get("mode") or sv.LISTEN,
            reason=f"{reason}:{cause}" if cause and reason == REASON_NOT_ANSWERED else reason,
            duration_ms=0))

    # -- events --------------------------------------------------------------------------------
    def _segment_start(self, p: dict, envelope: Envelope, mode: str) -> None:
        self._publish(envelope, "call.control.start", payloads.call_control(
            p["callId"], supervision_id=p["supervisionId"], supervisor_id=p.get("supervisorId"),
            agent_id=p.get("agentId"), mode=mode))
        if mode == sv.WHISPER:
            self._coaching(p, envelope, True)

    def _segment_stop(self, p: dict, envelope: Envelope, mode: str, reason: str, duration_ms: int) -> None:
        if mode == sv.WHISPER:
            self._coaching(p, envelope, False)
        self._publish(envelope, "call.control.stop", payloads.call_control(
            p["callId"], supervision_id=p["supervisionId"], supervisor_id=p.get("supervisorId"),
            agent_id=p.get("agentId"), mode=mode, reason=reason, duration_ms=duration_ms))

    def _coaching(self, p: dict, envelope: Envelope, on: bool) -> None:
        self._publish(envelope, "agent.supervisor.coaching", payloads.supervisor_coaching(
            p["callId"], supervision_id=p["supervisionId"], supervisor_id=p.get("supervisorId"),
            agent_id=p.get("agentId"), coaching=on))

    def _publish(self, envelope: Envelope, key: str, payload: dict) -> None:
        try:
            self.emit(key, payload, account_id=envelope.account, trace_id=envelope.trace_id)
        except Exception:  # the database is away: the supervision goes on, the event is lost
            log.exception("supervision %s: %s not published", payload.get("supervisionId"), key)


def _replace(record: sv.Supervision, **changes: object) -> sv.Supervision:
    from dataclasses import replace
    return replace(record, **changes)


def _elapsed_ms(since: Optional[float]) -> int:
    return max(0, int((time.time() - since) * 1000)) if since else 0


def _stopped_key(prefix: str, sid: str) -> str:
    return f"{prefix}supervision-stopped:{sid}"


def start_supervise_consumer(supervisor: Supervisor, seen: SeenIds, **consumer_kw) -> EventConsumer:
    """Shared durable queue: each command is executed once, by whichever controller takes it.
    A start runs for the supervision's whole life (it watches the supervisor's leg), so each
    command gets its own greenlet from a bounded pool."""
    pool = gevent.pool.Pool(MAX_SUPERVISIONS_IN_FLIGHT)
    return EventConsumer.of_work_queue(work_queues.CALL_SUPERVISE, lambda env: pool.spawn(supervisor.handle, env),
                                       seen=seen, **consumer_kw).start()
