"""Fixtures for the FreeSWITCH simulator: an outbound ESL server on a free port, simulated calls,
and a simulated inbound ESL port. Everything started here is stopped at teardown."""
from __future__ import annotations

from typing import Callable, Iterator

import pytest

from esl.outbound import OutboundConnection, OutboundServer
from tests.simulator import Call, SimOutboundCall, place_call


@pytest.fixture
def outbound_server() -> Iterator[Callable[..., OutboundServer]]:
    """Factory: ``outbound_server(app, **kw)`` starts an OutboundServer on 127.0.0.1:<free port>."""
    servers: list[OutboundServer] = []

    def start(app: Callable[[OutboundConnection], None], **kw) -> OutboundServer:
        server = OutboundServer(app, "127.0.0.1", 0, **kw)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop(timeout=1)


@pytest.fixture
def simulate_call() -> Iterator[Callable[[Call, OutboundServer], SimOutboundCall]]:
    """``simulate_call(Call(...), server)`` dials the server like FreeSWITCH's socket app."""
    calls: list[SimOutboundCall] = []

    def dial(scenario: Call, server: OutboundServer) -> SimOutboundCall:
        call = place_call(scenario, server.address)
        calls.append(call)
        return call

    yield dial
    for call in calls:
        call.kill()


@pytest.fixture
def inbound_sim():
    """A started simulated inbound ESL port (password ClueCon); stopped at teardown."""
    from tests.simulator.inbound import InboundServer

    server = InboundServer(password="ClueCon")
    server.start()
    yield server
    server.stop()
