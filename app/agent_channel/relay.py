"""Bus events → the agent's socket, in the API process that holds it.

Every API process runs one consumer on its own server-named, exclusive, auto-deleted queue
(``EventConsumer`` without a queue name): each process sees every agent event and delivers
only to its local sockets; a process that stops takes its queue with it. Events missed while a
process is disconnected from the broker are not replayed: the agent's ``state`` is re-sent on
every (re)connect of the socket, and an offer lasts seconds.

One handler per routing key, in an explicit registry (``RELAYS``).
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Optional

from app.agent_channel import protocol
from app.agent_channel.connection import AgentConnection
from app.agent_channel.hub import Hub
from app.events.consumer import EventConsumer
from app.events.envelope import Envelope
from app.events.exchanges import CALL_EVENTS, SYSTEM_EVENTS

log = logging.getLogger(__name__)

Relay = Callable[[Hub, Envelope], None]

# offer withdrawn: why (docs/agents.md "offer")
WITHDRAWN_MISSED = "missed"
WITHDRAWN_REJECTED = "rejected"
WITHDRAWN_CALLER_LEFT = "caller_left"
WITHDRAWN_ANSWERED_ELSEWHERE = "answered_elsewhere"


def _agent(hub: Hub, env: Envelope) -> Optional[AgentConnection]:
    return hub.connection(env.account, env.payload.get("agentId"))


def _state(hub: Hub, env: Envelope) -> None:
    conn = _agent(hub, env)
    if conn is not None:
        p = env.payload
        conn.send(protocol.message("state", state=p.get("state"), reason=p.get("reason"),
                                   previousState=p.get("previousState"), changedAt=p.get("changedAt")))


def _offer(hub: Hub, env: Envelope) -> None:
    conn = _agent(hub, env)
    if conn is not None:
        p = env.payload
        conn.offer_id = p.get("callId")
        conn.send(protocol.message("offer", phase="ringing", offerId=p.get("callId"), callId=p.get("callId"),
                                   queue=p.get("queue"), queueId=p.get("queueId"), **{"from": p.get("from")},
                                   timeoutSeconds=p.get("timeoutSeconds"), waitedSeconds=p.get("waitedSeconds")))


def _consult_offer(hub: Hub, env: Envelope) -> None:
    """An agent consulted in an attended transfer: its phone or SDK leg rings now. An ``offer``
    of kind ``consult`` named after the caller's call, so ``accept`` answers it as a queue
    offer and the call it becomes is the caller's once the transfer completes."""
    conn = _agent(hub, env)
    if conn is not None:
        p = env.payload
        conn.offer_id = p.get("callId")
        conn.send(protocol.message("offer", phase="ringing", kind="consult", offerId=p.get("callId"),
                                   callId=p.get("callId"), fromAgentId=p.get("fromAgentId"),
                                   **{"from": p.get("from")}, to=p.get("to"), timeoutSeconds=p.get("timeoutSeconds")))


def _consult_withdrawn(hub: Hub, env: Envelope) -> None:
    """The consulted agent does not take the caller (cancelled, not answered, the consulted leg
    hung up, the caller left): its offer is withdrawn, also when it had accepted it."""
    conn = _agent(hub, env)
    if conn is not None:
        _withdraw(conn, env.payload.get("callId"), env.payload.get("reason") or WITHDRAWN_MISSED, None, kind="consult")


def _consult_failed(hub: Hub, env: Envelope) -> None:
    """The consulting agent's consultation ended without its asking (the consulted agent
    rejected it, or it was missed): ``consult`` phase ``failed``; it has its caller again."""
    conn = _agent(hub, env)
    if conn is not None:
        p = env.payload
        conn.send(protocol.message("consult", phase="failed", callId=p.get("callId"), to=p.get("to"),
                                   reason=p.get("reason")))


def _preview(hub: Hub, env: Envelope) -> None:
    """A campaign contact to preview (app/campaigns/preview.py): ``offer`` of kind ``preview``."""
    conn = _agent(hub, env)
    if conn is not None:
        p = env.payload
        conn.preview_id = p.get("offerId")
        conn.send(protocol.message("offer", phase="ringing", kind="preview", offerId=p.get("offerId"),
                                   campaignId=p.get("campaignId"), contact=p.get("contact"),
                                   timeoutSeconds=p.get("timeoutSeconds")))


def _preview_withdrawn(hub: Hub, env: Envelope) -> None:
    conn = _agent(hub, env)
    offer_id = env.payload.get("offerId")
    if conn is not None and offer_id:
        if conn.preview_id == offer_id:
            conn.preview_id = None
        conn.send(protocol.message("offer", phase="withdrawn", kind="preview", offerId=offer_id,
                                   reason=env.payload.get("reason"), cause=None))


def _withdraw(conn: AgentConnection, call_id: Optional[str], reason: str, cause: Optional[str],
              **extra: str) -> None:
    if call_id and conn.offer_id == call_id:
        conn.offer_id = None
        conn.send(protocol.message("offer", phase="withdrawn", offerId=call_id, reason=reason, cause=cause, **extra))


def _missed(hub: Hub, env: Envelope) -> None:
    conn = _agent(hub, env)
    if conn is not None:
        _withdraw(conn, env.payload.get("callId"), WITHDRAWN_MISSED, env.payload.get("cause"))


def _rejected(hub: Hub, env: Envelope) -> None:
    conn = _agent(hub, env)
    if conn is not None:
        _withdraw(conn, env.payload.get("callId"), WITHDRAWN_REJECTED, env.payload.get("cause"))


def _accepted(hub: Hub, env: Envelope) -> None:
    call_id = env.payload.get("callId")
    conn = _agent(hub, env)
    if conn is not None:
        conn.offer_id = None
        conn.call_id = call_id
        conn.connected_at = time.monotonic()
        conn.send(protocol.message("call", phase="connected", callId=call_id))
    for other in hub.on_call(env.account, call_id):  # ring_all: the agents who did not answer first
        if other is not conn:
            _withdraw(other, call_id, WITHDRAWN_ANSWERED_ELSEWHERE, None)


def _call_ended(hub: Hub, env: Envelope) -> None:
    call_id = env.payload.get("callId")
    cause = env.payload.get("hangupCause")
    for conn in hub.on_call(env.account, call_id):
        if conn.call_id == call_id:
            conn.call_id = None
            conn.send(protocol.message("call", phase="ended", callId=call_id, cause=cause))
        else:  # still offered: the caller went away while the agent's phone rang
            _withdraw(conn, call_id, WITHDRAWN_CALLER_LEFT, cause)


def _transferred(hub: Hub, env: Envelope) -> None:
    """The agent who had the caller is off the call (its leg was hung up by the transfer):
    ``call`` phase ``transferred`` instead of ``ended``, with the target."""
    p = env.payload
    conn = hub.connection(env.account, (p.get("from") or {}).get("agentId"))
    if conn is not None and conn.call_id == p.get("callId"):
        conn.call_id = None
        conn.send(protocol.message("call", phase="transferred", callId=p.get("callId"), to=p.get("to"),
                                   kind=p.get("kind")))


def _supervisor(active: Optional[bool]) -> Relay:
    """``call.control.start|stop`` and ``agent.supervisor.coaching`` that name an agent."""

    def relay(hub: Hub, env: Envelope) -> None:
        conn = _agent(hub, env)
        if conn is not None:
            p = env.payload
            # agent.supervisor.coaching says in its payload whether whispering starts or ends
            on = active if active is not None else bool(p.get("coaching", True))
            conn.send(protocol.message(
                "supervisor", event=env.type, active=on,
                mode=p.get("mode"), supervisorId=p.get("supervisorId"), callId=p.get("callId")))

    return relay


RELAYS: dict[str, Relay] = {
    "agent.state.changed": _state,
    "agent.offer": _offer,
    "agent.consult.offer": _consult_offer,
    "agent.consult.withdrawn": _consult_withdrawn,
    "agent.consult.failed": _consult_failed,
    "agent.preview.offer": _preview,
    "agent.preview.withdrawn": _preview_withdrawn,
    "agent.accept": _accepted,
    "agent.missed": _missed,
    "agent.reject": _rejected,
    "call.ended": _call_ended,
    "call.transferred": _transferred,
    "call.control.start": _supervisor(True),
    "call.control.stop": _supervisor(False),
    "agent.supervisor.coaching": _supervisor(None),
}

BINDINGS = [(SYSTEM_EVENTS, key) for key in RELAYS if not key.startswith("call.")] + \
           [(CALL_EVENTS, key) for key in RELAYS if key.startswith("call.")]


def relay(hub: Hub, env: Envelope) -> None:
    handler = RELAYS.get(env.type)
    if handler is not None and hub.local:
        handler(hub, env)


def start_relay(hub: Hub, **consumer_kw) -> EventConsumer:
    """This process's consumer: exclusive queue, local delivery only."""
    return EventConsumer(BINDINGS, lambda env: relay(hub, env), **consumer_kw).start()
