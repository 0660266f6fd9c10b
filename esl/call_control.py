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
"""
from __future__ import annotations

import logging
from typing import Callable

import gevent.lock
import gevent.pool

from app.calls.control import QUEUE, ROUTING_KEY, ControlRequest, InvalidControl
from app.events.consumer import EventConsumer, SeenIds
from app.events.envelope import Envelope
from app.events.exchanges import CALL_EVENTS
from esl.errors import EslError
from esl.inbound import InboundConnection

log = logging.getLogger(__name__)

NO_CHANNEL = "-ERR No such channel"
# A re-INVITE that the phone never answers times out in sofia after ~32 s (timer B/F)
RESULT_TIMEOUT_SECONDS = 40.0
MAX_CONTROLS_IN_FLIGHT = 500


class CallControl:
    def __init__(self, nodes: Callable[[], list[InboundConnection]]) -> None:
        self.nodes = nodes
        self.done = 0
        self._legs: dict[str, list] = {}  # leg id -> [lock, requests holding or waiting]

    def handle(self, envelope: Envelope) -> None:
        try:
            request = ControlRequest.from_envelope(envelope)
        except InvalidControl as exc:
            log.warning("call.control %s ignored: %s", envelope.id, exc)
            return
        self.run(request)

    def run(self, request: ControlRequest) -> bool:
        """True when a node had the channel and accepted the command. Requests for the same
        leg run one after the other, in the order they arrived (hold, then unhold)."""
        entry = self._legs.setdefault(request.leg_id, [gevent.lock.Semaphore(), 0])
        entry[1] += 1
        try:
            with entry[0]:
                return self._run(request)
        finally:
            entry[1] -= 1
            if not entry[1]:
                self._legs.pop(request.leg_id, None)

    def _run(self, request: ControlRequest) -> bool:
        command = request.command()
        for node in [n for n in self.nodes() if n.connected]:
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
            return ok
        log.info("call %s: control %s: no switch has leg %s (ended?)", request.call_id, request.action,
                 request.leg_id)
        return False


def start_call_control_consumer(control: CallControl, seen: SeenIds, **consumer_kw) -> EventConsumer:
    """One durable queue shared by every controller: each request is run once, in its own
    greenlet (a full pool stops the consumer taking more: they wait on the queue)."""
    pool = gevent.pool.Pool(MAX_CONTROLS_IN_FLIGHT)
    return EventConsumer([(CALL_EVENTS, ROUTING_KEY)], lambda env: pool.spawn(control.handle, env),
                         queue=QUEUE, seen=seen, **consumer_kw).start()
