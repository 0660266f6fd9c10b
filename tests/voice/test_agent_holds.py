"""Holds on an agent's leg reach the caller's session on this controller only (app/voice/agent_holds.py):
events as FreeSWITCH sends them on the inbound connection (CHANNEL_HOLD of the bridged agent
leg, with its variables and Other-Leg-* of the caller)."""
from __future__ import annotations

from app.voice.agent_holds import AgentHoldRelay
from esl.protocol import Event

CALLER, AGENT_LEG = "0f6d2d9e-8b5a-4c1e-9a57-1c2f3b4a5d6e", "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


class _Conn:
    def __init__(self) -> None:
        self.delivered: list[Event] = []

    def deliver(self, event: Event) -> None:
        self.delivered.append(event)


def _hold(name: str = "CHANNEL_HOLD", unique_id: str = AGENT_LEG, other: str = CALLER,
          agent: str | None = "5b6c7d8e-0000-4000-8000-000000000001") -> Event:
    headers = [("Event-Name", name), ("Unique-ID", unique_id), ("Other-Type", "originator"),
               ("Other-Leg-Unique-ID", other)]
    if agent:
        headers.append(("variable_sbc_agent_id", agent))
    return Event(headers)


def test_given_an_agent_leg_of_a_call_here_when_held_and_unheld_then_both_reach_the_callers_connection():
    conn = _Conn()
    relay = AgentHoldRelay({CALLER: conn})
    assert relay.relay(_hold("CHANNEL_HOLD")) and relay.relay(_hold("CHANNEL_UNHOLD"))
    assert [e.dispatch_key for e in conn.delivered] == ["CHANNEL_HOLD", "CHANNEL_UNHOLD"]


def test_given_another_controllers_call_or_a_non_agent_leg_or_the_callers_own_leg_then_nothing_is_delivered():
    conn = _Conn()
    relay = AgentHoldRelay({CALLER: conn})
    assert not relay.relay(_hold(other="11111111-2222-4333-8444-555555555555"))  # not a call of ours
    assert not relay.relay(_hold(agent=None))                                   # not an agent's leg
    # the caller's own hold (ring_all exports sbc_agent_id to it): its socket already has it
    assert not relay.relay(_hold(unique_id=CALLER, other=AGENT_LEG))
    assert conn.delivered == []
