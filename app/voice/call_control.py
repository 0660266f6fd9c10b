"""The controllers' side of ``call.control`` (app/calls/control.py): run the action on the node
that has the channel.

Every controller holds an inbound ESL connection to every configured FreeSWITCH node, so any
of them can act on any call. The request does not say which node: each connected node is asked
in turn until one does not answer ``-ERR No such channel`` (with one node, the usual case, that
is one round trip). A request whose channel no node has (the call ended meanwhile) is logged
and dropped: the requester learns the outcome from the call's own events.

``bgapi``, not ``api``, and one greenlet per request: ``uuid_hold`` waits for the phone to
answer its re-INVITE (the real switch showed ``uuid_hold off`` blocking past 5 s on a phone
that did not answer it), and a blocking ``api`` holds the whole inbound connection (FreeSWITCH
runs an ESL connection's ``api`` commands one at a time) and this consumer with it.

Hold and unhold of one leg never overlap on the switch. On FreeSWITCH 1.10.12 an unhold sent
~100 ms after a hold could stop the caller's hold music before its broadcast had started: the
music then looped for ever and the agent's leg could not be hung up. So requests for one leg
run one at a time, in arrival order; a hold or unhold waits for the leg's CHANNEL_HOLD /
CHANNEL_UNHOLD (the switch has done it) plus ``HOLD_SETTLE_SECONDS`` (the caller's session has
started or stopped the music) before the next request of that leg runs; and a hold or unhold
that a later opposite request has superseded while it waited is not sent (the final state wins:
hold + unhold queued together send nothing).
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Optional

import gevent.event
import gevent.lock
import gevent.pool

from app.calls.control import ControlRequest, InvalidControl
from app.events import work_queues
from app.events.consumer import EventConsumer, SeenIds
from app.events.envelope import Envelope
from app.voice.agent_holds import AGENT_HOLD_EVENTS
from esl.errors import EslError
from esl.inbound import InboundConnection
from esl.protocol import Event

log = logging.getLogger(__name__)

NO_CHANNEL = "-ERR No such channel"
# A re-INVITE that the phone never answers times out in sofia after ~32 s (timer B/F)
RESULT_TIMEOUT_SECONDS = 40.0
MAX_CONTROLS_IN_FLIGHT = 500
# How long a hold/unhold waits for the leg's CHANNEL_HOLD/UNHOLD before the leg's next request
HOLD_CONFIRM_SECONDS = 5.0
# After the event: the caller's session starts (or stops) the hold-music broadcast in its own
# thread, at its next frame; the opposite action must not overtake it
HOLD_SETTLE_SECONDS = 0.3
HOLD_ACTIONS = {"hold": True, "unhold": False}
# the caller's current application while the hold music plays (uuid_getvar current_application)
HOLD_MUSIC_APPS = frozenset({"playback", "endless_playback"})
HOLD_MUSIC_WAIT_SECONDS = 2.0
HOLD_MUSIC_POLL_SECONDS = 0.05
# legs whose hold state is remembered (oldest forgotten first): ended legs are never told to us
MAX_REMEMBERED_LEGS = 10_000


class _Leg:
    """One leg's requests in progress: run one at a time; ``wanted`` is the hold state the
    latest hold/unhold asked for (what the agent sees)."""

    def __init__(self) -> None:
        self.lock = gevent.lock.Semaphore()
        self.users = 0
        self.wanted: bool | None = None
        self.confirmed = gevent.event.Event()   # set by the leg's CHANNEL_HOLD / CHANNEL_UNHOLD
        self.expect: str | None = None          # which of them, while a hold/unhold is in flight


class CallControl:
    def __init__(self, nodes: Callable[[], list[InboundConnection]]) -> None:
        self.nodes = nodes
        self.done = 0
        self.coalesced = 0  # hold/unhold requests not sent: superseded, or the leg already there
        self._legs: dict[str, _Leg] = {}
        self._held: dict[str, bool] = {}  # leg id -> hold state this controller last set
        self._attached: set[int] = set()

    def handle(self, envelope: Envelope) -> None:
        try:
            request = ControlRequest.from_envelope(envelope)
        except InvalidControl as exc:
            log.warning("call.control %s ignored: %s", envelope.id, exc)
            return
        self.run(request)

    def run(self, request: ControlRequest) -> bool:
        """True when a node had the channel and accepted the command (or a hold/unhold needed
        no command). Requests for the same leg run one after the other, in arrival order."""
        leg = self._legs.setdefault(request.leg_id, _Leg())
        target = HOLD_ACTIONS.get(request.action)
        if target is not None:
            leg.wanted = target
        leg.users += 1
        try:
            with leg.lock:
                if target is None:
                    ok = self._run(request)
                    if request.action == "kill":
                        self._held.pop(request.leg_id, None)
                    return ok
                return self._hold(request, leg, target)
        finally:
            leg.users -= 1
            if not leg.users:
                self._legs.pop(request.leg_id, None)

    def _hold(self, request: ControlRequest, leg: _Leg, target: bool) -> bool:
        if leg.wanted != target or self._held.get(request.leg_id, False) == target:
            self.coalesced += 1
            log.info("call %s: control %s on leg %s not sent (%s)", request.call_id, request.action,
                     request.leg_id, "superseded" if leg.wanted != target else "already so")
            return True
        leg.expect = "CHANNEL_HOLD" if target else "CHANNEL_UNHOLD"
        leg.confirmed.clear()
        ok, node = self._send(request)
        if ok:
            self._remember(request.leg_id, target)
            if not leg.confirmed.wait(HOLD_CONFIRM_SECONDS):
                log.warning("call %s: no %s on leg %s after %.0fs", request.call_id, leg.expect,
                            request.leg_id, HOLD_CONFIRM_SECONDS)
            if target and node is not None:
                self._wait_hold_music(node, request.call_id)
            gevent.sleep(HOLD_SETTLE_SECONDS)
        leg.expect = None
        return ok

    def _wait_hold_music(self, node: InboundConnection, call_id: str) -> None:
        """Until the caller's session runs the hold music (``uuid_hold`` queued it there as a
        broadcast, run at that session's next frame — after the event above, and on the real
        switch once 120 ms after the unhold that should have stopped it). Bounded: a switch
        without hold music never plays it."""
        deadline = time.monotonic() + HOLD_MUSIC_WAIT_SECONDS
        while time.monotonic() < deadline:
            try:
                app = node.bgapi(f"uuid_getvar {call_id} current_application").result(
                    timeout=HOLD_MUSIC_WAIT_SECONDS)
            except EslError:
                return
            if app.strip() in HOLD_MUSIC_APPS or app.startswith("-ERR"):
                return
            gevent.sleep(HOLD_MUSIC_POLL_SECONDS)
        log.info("call %s: no hold music started within %.1fs", call_id, HOLD_MUSIC_WAIT_SECONDS)

    def _remember(self, leg_id: str, held: bool) -> None:
        self._held.pop(leg_id, None)
        self._held[leg_id] = held
        while len(self._held) > MAX_REMEMBERED_LEGS:
            self._held.pop(next(iter(self._held)))

    def on_hold_event(self, event: Event) -> None:
        """CHANNEL_HOLD / CHANNEL_UNHOLD of any leg: releases the leg's next request."""
        leg = self._legs.get(event.get("Unique-ID") or "")
        if leg is not None and leg.expect == event.name:
            leg.confirmed.set()

    def _connected_nodes(self) -> list[InboundConnection]:
        nodes = [n for n in self.nodes() if n.connected]
        for node in nodes:
            if id(node) not in self._attached:  # handlers survive reconnects (InboundConnection.on)
                self._attached.add(id(node))
                for name in AGENT_HOLD_EVENTS:
                    node.on(name, self.on_hold_event)
        return nodes

    def _run(self, request: ControlRequest) -> bool:
        return self._send(request)[0]

    def _send(self, request: ControlRequest) -> tuple[bool, Optional[InboundConnection]]:
        """(accepted, the node that had the channel)."""
        command = request.command()
        for node in self._connected_nodes():
            try:
                reply = node.bgapi(command).result(timeout=RESULT_TIMEOUT_SECONDS)
            except EslError as exc:  # that link broke: another node, or the next request
                log.warning("call.control %s on %s:%s failed: %s", request.action, node.host, node.port, exc)
                continue
            if reply.startswith(NO_CHANNEL):
                continue
            ok = not reply.startswith("-ERR")
            log.info("call %s: control %s on leg %s (agent %s): %s", request.call_id, request.action,
                     request.leg_id, request.agent_id, reply.strip()[:120])
            self.done += ok
            return ok, node
        log.info("call %s: control %s: no switch has leg %s (ended?)", request.call_id, request.action,
                 request.leg_id)
        return False, None


# One controller at a time consumes the queue (RabbitMQ single active consumer,
# work_queues.CALL_CONTROL; the next takes over, with the unacknowledged requests, when it
# goes): requests for one leg are then ordered and serialized by that controller's
# ``CallControl`` — competing consumers would run a hold on one controller and its unhold
# 100 ms later on another, side by side.


def start_call_control_consumer(control: CallControl, seen: SeenIds, **consumer_kw) -> EventConsumer:
    """One durable queue shared by every controller, consumed by one of them at a time: each
    request is run once, in its own greenlet, spawned in arrival order (a full pool stops the
    consumer taking more: they wait on the queue)."""
    pool = gevent.pool.Pool(MAX_CONTROLS_IN_FLIGHT)
    return EventConsumer.of_work_queue(work_queues.CALL_CONTROL, lambda env: pool.spawn(control.handle, env),
                                       seen=seen, **consumer_kw).start()
