"""FreeSWITCH 1.10.12 ESL simulator: the one allowed test double (see DESIGN.md).

- :func:`place_call` — outbound: dial the controller like ``socket host:port async full``.
- :class:`InboundServer` — inbound: the ESL port (auth, api, bgapi, events, filter, exit).
- :class:`Call` — scenarios as data.
"""
from tests.simulator.scenario import BridgeOutcome, Call, Timing
from tests.simulator.outbound import ReceivedCommand, SimOutboundCall


def place_call(scenario: Call, address: tuple[str, int]) -> SimOutboundCall:
    """Start a simulated call towards the controller's outbound server at ``address``."""
    return SimOutboundCall(scenario, address).start()


__all__ = ["BridgeOutcome", "Call", "Timing", "ReceivedCommand", "SimOutboundCall", "place_call"]
