"""Holds on an agent's leg, counted on the caller's session (interaction summary hold count
and time).

The agent channel holds a call with ``uuid_hold`` on the *agent's* leg (docs/agents.md
"Live-call actions"), and an agent's phone may hold it itself (re-INVITE sendonly). Either
way FreeSWITCH fires CHANNEL_HOLD / CHANNEL_UNHOLD on that leg, which the caller's outbound
socket never sees (``myevents`` is the caller's channel only) and which leaves the caller's
``hold_events`` empty. Every controller's inbound connection subscribes to both events (rare:
holds only); the one driving the caller's call (its ``live_calls``) hands the event to that
call's connection, where the session counts it like a hold of its own leg. An agent's leg is
recognised by its ``sbc_agent_id`` variable (set by the queue verb's dial string); its caller
is ``Other-Leg-Unique-ID`` (the originator of the bridged leg).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from esl.inbound import InboundConnection
    from esl.outbound import OutboundConnection
    from esl.protocol import Event

AGENT_HOLD_EVENTS = ("CHANNEL_HOLD", "CHANNEL_UNHOLD")
AGENT_LEG_VARIABLE = "sbc_agent_id"


class AgentHoldRelay:
    def __init__(self, live_calls: Mapping[str, "OutboundConnection"]) -> None:
        self.live_calls = live_calls

    def attach(self, node: "InboundConnection") -> None:
        for name in AGENT_HOLD_EVENTS:
            node.on(name, self.relay)

    def relay(self, event: "Event") -> bool:
        """Deliver an agent leg's hold event to its caller's session here; False when it is
        not an agent leg or not a call of this controller."""
        if event.get("Unique-ID") in self.live_calls or not event.variable(AGENT_LEG_VARIABLE):
            return False  # the caller's own leg (its socket has it already), or not an agent's
        conn = self.live_calls.get(event.get("Other-Leg-Unique-ID") or "")
        if conn is None:
            return False
        conn.deliver(event)
        return True
