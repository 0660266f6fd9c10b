"""Agent channel tests: real WebSockets against the API on gevent's pywsgi (the ``sbc api``
server class), real Postgres, Redis and RabbitMQ.

``channel_server()`` starts one API "process" in the test: its own Flask app, so its own hub,
takeover listener and exclusive relay queue (two of them behave as two API processes, which
one test also proves with two real ``sbc api`` subprocesses). The outbox publisher of the test
process relays what the API writes to the outbox, as a controller would.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

import gevent
import pytest

from app.cli.api import NoDelayWSGIServer
from tests.agent_channel.client import ChannelClient


class ChannelServer:
    def __init__(self) -> None:
        from app.api.app import create_app

        self.app = create_app({"TESTING": True})
        self.server = NoDelayWSGIServer(("127.0.0.1", 0), self.app, log=None)
        self.server.start()
        self.port = self.server.server_port
        self.clients: list[ChannelClient] = []

    def connect(self, host: str) -> ChannelClient:
        client = ChannelClient(self.port, host)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        runtime = self.app.extensions.get("agent_channel")
        if runtime is not None:
            runtime.stop()
        self.server.stop(timeout=2)


@pytest.fixture
def publisher(database, amqp_vhost) -> Iterator[None]:
    from app.events.publisher import start_publisher, stop_publisher

    start_publisher(poll_seconds=0.1)
    yield
    stop_publisher()


@pytest.fixture
def channel_server(database, amqp_vhost, publisher) -> Iterator[Callable[[], ChannelServer]]:
    servers: list[ChannelServer] = []

    def start() -> ChannelServer:
        server = ChannelServer()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
    gevent.sleep(0)


# the verbs harness: a queue verb on a simulated call (tests/verbs/conftest.py)
from tests.verbs.conftest import run_on_call  # noqa: E402,F401


@pytest.fixture
def call_control(inbound_sim, amqp_vhost) -> Iterator[Any]:
    """A controller's ``call.control`` consumer, its one node the simulator's inbound port
    (which reaches the simulated calls' channels, as a switch's ESL port does)."""
    from app.events.consumer import RecentIds
    from app.voice.call_control import CallControl, start_call_control_consumer
    from esl.inbound import InboundConnection

    node = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False,
                             events=["CHANNEL_HOLD", "CHANNEL_UNHOLD"])  # as the controller's nodes
    node.connect()
    control = CallControl(lambda: [node])
    consumer = start_call_control_consumer(control, RecentIds())
    consumer.ready.wait(10)
    yield control
    consumer.stop()
    node.close()
