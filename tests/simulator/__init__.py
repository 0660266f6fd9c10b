"""FreeSWITCH 1.10.12 ESL simulator: the one allowed test double (see DESIGN.md).

- :func:`place_call` — outbound: dial the controller like ``socket host:port async full``.
- :class:`InboundServer` — inbound: the ESL port (auth, api, bgapi, events, filter, exit).
- :class:`Call` — scenarios as data.

Typical test::

    server = outbound_server(session_app)               # fixture from tests/plugins/esl_sim.py
    call = simulate_call(Call(caller="15551230000", callee="15557650000")
                         .press("12#", after=0.1).hangup_after(3.0), server)
    assert call.wait(10)
    assert call.executed("play_and_get_digits")[0][1].startswith("1 4 1 5000 #")
    assert [e.get("Hangup-Cause") for e in call.events_named("CHANNEL_HANGUP")] == ["NORMAL_CLEARING"]

Per-app behaviour (answer, playback, speak, play_and_get_digits, bridge, record_session,
conference, sleep, set, hangup, park, ...) lives in ``outbound.APP_BEHAVIOURS``; header sets come
from the captures in tests/fixtures/esl_captures (see templates.py) and are checked against them
by tests/esl/test_simulator_vs_captures.py.
"""
from tests.simulator.outbound import ReceivedCommand, SimOutboundCall
from tests.simulator.scenario import BridgeOutcome, Call, RingingPhone, Timing


def place_call(scenario: Call, address: tuple[str, int]) -> SimOutboundCall:
    """Start a simulated call towards the controller's outbound server at ``address``."""
    return SimOutboundCall(scenario, address).start()


__all__ = ["BridgeOutcome", "Call", "RingingPhone", "Timing", "ReceivedCommand", "SimOutboundCall", "place_call"]
