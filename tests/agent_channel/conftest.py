"""Agent channel tests: real WebSockets against the API on gevent's pywsgi (the ``sbc api``
server class), real Postgres, Redis and RabbitMQ.

``channel_server()`` starts one API "process" in the test: its own Flask app, so its own hub,
takeover listener and exclusive relay queue (two of them behave as two API processes, which
one test also proves with two real ``sbc api`` subprocesses). The outbox publisher of the test
process relays what the API writes to the outbox, as a controller would.
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterator, Optional

import gevent
import pytest
import websocket

from app.cli.api import NoDelayWSGIServer

CHANNEL = "/api/agents/me/channel"


class ChannelClient:
    """One agent socket; ``expect`` skips messages until one matches."""

    def __init__(self, port: int, host: str, *, timeout: float = 10.0) -> None:
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{CHANNEL}", host=host, timeout=timeout)
        self.seen: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []  # received, not yet expected
        self._ids = 0

    def send(self, body: Any) -> None:
        self.ws.send(body if isinstance(body, str) else json.dumps(body))

    def auth(self, token: str) -> dict[str, Any]:
        self.send({"type": "auth", "token": token})
        return self.expect("connection")

    def command(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Send a command; returns its ack."""
        self._ids += 1
        command_id = str(self._ids)
        self.send({"type": type_, "id": command_id, **fields})
        return self.expect("ack", lambda m: m.get("id") == command_id)

    def recv(self) -> Optional[dict[str, Any]]:
        """The next message, or None when the server closed the socket."""
        opcode, data = self.ws.recv_data(control_frame=False)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            self.close_code = int.from_bytes(data[:2], "big") if len(data) >= 2 else None
            return None
        body = json.loads(data)
        self.seen.append(body)
        return body

    def expect(self, type_: str, match: Callable[[dict], bool] = lambda _m: True,
               timeout: float = 15.0) -> dict[str, Any]:
        """The first message of ``type_`` matching ``match``, received before or now; the
        messages passed over stay for later ``expect`` calls (order kept)."""
        for n, body in enumerate(self.pending):
            if body.get("type") == type_ and match(body):
                return self.pending.pop(n)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.recv()
            if body is None:
                raise AssertionError(f"closed ({getattr(self, 'close_code', None)}) waiting for {type_}; seen {self.seen}")
            if body.get("type") == type_ and match(body):
                return body
            self.pending.append(body)
        raise AssertionError(f"no {type_} within {timeout}s; seen {self.seen}")

    def closed_with(self, timeout: float = 10.0) -> Optional[int]:
        """Read until the server closes; its close code."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.recv() is None:
                return self.close_code
        raise AssertionError("the server did not close the socket")

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - already closed by the server
            pass


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
    from esl.call_control import CallControl, start_call_control_consumer
    from esl.inbound import InboundConnection

    node = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False)
    node.connect()
    control = CallControl(lambda: [node])
    consumer = start_call_control_consumer(control, RecentIds())
    consumer.ready.wait(10)
    yield control
    consumer.stop()
    node.close()
