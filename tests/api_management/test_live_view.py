"""The console's live view: ``POST /api/live/tickets`` and the server-sent events stream
``GET /api/live/stream?ticket=``, on a real gevent pywsgi server (the ``sbc api`` server
class) with real Redis, PostgreSQL and RabbitMQ; events are published through the product's
outbox publisher, as a controller publishes them."""
from __future__ import annotations

import json
import time
import uuid
from typing import Any, Iterator

import gevent
import pytest
import requests

from app import limits
from app.api.live.board import Board
from app.api.live.streams import LiveHub, LiveStream
from app.calls import live_calls
from app.cli.api import NoDelayWSGIServer
from app.contact.presence import Presence
from app.events.envelope import Envelope, make_envelope
from app.events.payloads import call_started, emit
from app.settings import get_settings
from tests.agent_channel.conftest import publisher  # noqa: F401  (fixture)
from tests.api_management.helpers import assert_error
from tests.plugins.eventually import eventually


class Events:
    """An open stream, read by a greenlet into (event, data) pairs."""

    def __init__(self, port: int, host: str, ticket: str) -> None:
        self.response = requests.get(f"http://127.0.0.1:{port}/api/live/stream", params={"ticket": ticket},
                                     headers={"Host": host}, stream=True, timeout=30)
        self.received: list[tuple[str, Any]] = []
        self.reader = gevent.spawn(self._read)

    def _read(self) -> None:
        event = None
        for line in self.response.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line.startswith("data: ") and event:
                self.received.append((event, json.loads(line[len("data: "):])))

    def of(self, kind: str) -> list[Any]:
        return [data for event, data in self.received if event == kind]

    def close(self) -> None:
        self.reader.kill()
        self.response.close()


@pytest.fixture
def live_server(database, amqp_vhost, publisher) -> Iterator[int]:  # noqa: F811
    from app.api.app import create_app

    app = create_app({"TESTING": True})
    server = NoDelayWSGIServer(("127.0.0.1", 0), app, log=None)
    server.start()
    streams: list[Events] = []
    app.config["test_streams"] = streams
    yield server.server_port
    for stream in streams:
        stream.close()
    runtime = app.extensions.get("live_view")
    if runtime is not None:
        runtime.stop()
    server.stop(timeout=2)


def _ticket(api, tenant, username: str = "admin") -> str:
    response = api.login(tenant, username).post("/api/live/tickets")
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["expires_in_seconds"] == 30 and body["stream_url"] == f"/api/live/stream?ticket={body['ticket']}"
    return body["ticket"]


def _metrics(queue_id: uuid.UUID, name: str, waiting: int) -> dict[str, Any]:
    return {"queueId": str(queue_id), "queue": name, "strategy": "longest_idle", "waiting": waiting,
            "longestWaitSeconds": 42, "agents": {"available": 1, "not_ready": 0, "wrap_up": 0, "offline": 0},
            "agentsEngaged": 0, "serviceLevel": {"targetSeconds": 20, "windowSeconds": 900, "answered": 4,
                                                 "withinTarget": 3, "percent": 75.0}, "periodSeconds": 30}


def test_given_two_tenants_when_both_have_events_then_a_stream_gets_only_its_own_tenants(
        api, seed, live_server) -> None:
    mine, theirs = seed.tenant(), seed.tenant()
    my_queue, their_queue = seed.queue(mine, "sales"), seed.queue(theirs, "their-sales")
    stream = Events(live_server, mine.host, _ticket(api, mine))
    eventually(lambda: stream.of("snapshot"), timeout=10, what="the first snapshot")
    first = stream.of("snapshot")[0]
    assert [(q["queueId"], q["queue"], q["waiting"]) for q in first["queues"]] == [(str(my_queue), "sales", 0)]
    assert first["callsInProgress"] == 0

    # theirs first: when mine has arrived, theirs (published before it) would have too
    emit("queue.metrics", dict(_metrics(their_queue, "their-sales", 99), accountSid=str(theirs.account_id)),
         account_id=theirs.account_id)
    emit("call.started", call_started(uuid.uuid4(), direction="inbound", from_number="15550009",
                                      to_number="15550010"), account_id=theirs.account_id)
    emit("queue.metrics", dict(_metrics(my_queue, "sales", 3), accountSid=str(mine.account_id)),
         account_id=mine.account_id)
    my_call = str(uuid.uuid4())
    emit("call.started", call_started(my_call, direction="inbound", from_number="15550001", to_number="15550002"),
         account_id=mine.account_id)
    eventually(lambda: stream.of("call"), timeout=10, what="my call on the stream")

    assert [(q["queueId"], q["waiting"], q["longestWaitSeconds"], q["serviceLevel"]["percent"])
            for q in stream.of("queue")] == [(str(my_queue), 3, 42, 75.0)]
    assert "accountSid" not in stream.of("queue")[0]
    assert [(c["callId"], c["phase"], c["from"]) for c in stream.of("call")] == [(my_call, "started", "15550001")]
    eventually(lambda: len(stream.of("snapshot")) == 2, timeout=10, what="the snapshot after the call event")
    assert [q["queueId"] for q in stream.of("snapshot")[1]["queues"]] == [str(my_queue)]
    stream.close()


def test_given_a_ticket_when_used_twice_then_the_second_is_refused(api, seed, live_server) -> None:
    tenant = seed.tenant()
    ticket = _ticket(api, tenant)
    stream = Events(live_server, tenant.host, ticket)
    eventually(lambda: stream.of("snapshot"), timeout=10, what="the first snapshot")
    again = requests.get(f"http://127.0.0.1:{live_server}/api/live/stream", params={"ticket": ticket},
                         headers={"Host": tenant.host}, timeout=10)
    assert (again.status_code, again.json()["code"]) == (401, "invalid_ticket")
    stream.close()


def test_given_a_ticket_when_redeemed_on_another_tenants_host_then_it_is_refused(api, seed) -> None:
    mine, theirs = seed.tenant(), seed.tenant()
    ticket = _ticket(api, mine)
    assert_error(api.anonymous(theirs.host).get(f"/api/live/stream?ticket={ticket}"), 401, "invalid_ticket")
    # refused once, gone: not usable on its own host either
    assert_error(api.anonymous(mine.host).get(f"/api/live/stream?ticket={ticket}"), 401, "invalid_ticket")


@pytest.mark.parametrize("query", ["", "?ticket=", "?ticket=not-a-ticket", "?ticket=" + "x" * 500])
def test_given_no_valid_ticket_when_the_stream_is_opened_then_it_is_refused(api, seed, query) -> None:
    tenant = seed.tenant()
    response = api.anonymous(tenant.host).get(f"/api/live/stream{query}")
    assert response.status_code in (401, 422), response.get_json()
    assert response.get_json()["code"] in ("invalid_ticket", "validation_failed")


def test_given_a_bearer_token_when_the_stream_is_opened_without_a_ticket_then_it_is_refused(api, seed) -> None:
    tenant = seed.tenant()
    assert_error(api.login(tenant).get("/api/live/stream?ticket=x"), 401, "invalid_ticket")


def test_given_an_agent_or_no_license_when_asking_a_ticket_then_it_is_forbidden(api, seed) -> None:
    tenant = seed.tenant()
    seed.user(tenant, "agent1", role="agent")
    assert_error(api.login(tenant, "agent1").post("/api/live/tickets"), 403, "supervisor_required")
    seed.user(tenant, "sup", role="supervisor")
    assert api.login(tenant, "sup").post("/api/live/tickets").status_code == 201
    bare = seed.tenant(licenses=["api-access"])
    assert_error(api.login(bare).post("/api/live/tickets"), 403, "license_required")
    assert_error(api.anonymous(tenant.host).post("/api/live/tickets"), 401, "missing_token")


def test_given_callers_and_agents_of_two_tenants_with_same_queue_name_when_the_board_is_read_then_only_its_own(
        api, seed, redis_client) -> None:
    prefix = get_settings().redis_key_prefix
    mine, theirs = seed.tenant(), seed.tenant()
    admin = api.login(mine)
    sales, idle = seed.queue(mine, "Sales"), seed.queue(mine, "Archive")
    their_sales = seed.queue(theirs, "Sales")
    for name, state in (("a1", "available"), ("a2", "not_ready")):
        user = seed.user(mine, name)
        agent = admin.post("/api/agents", json={"user_id": str(user.id), "memberships": [{"queue_id": str(sales)}]})
        assert agent.status_code == 201, agent.get_json()
        assert admin.put(f"/api/agents/{agent.get_json()['id']}/state", json={"state": state}).status_code == 200
    presence = Presence(redis_client, prefix)
    now_ms = int(time.time() * 1000)
    presence.join(str(mine.account_id), "Sales", str(uuid.uuid4()), enqueued_ms=now_ms - 42_000)
    presence.join(str(mine.account_id), "Sales", str(uuid.uuid4()), enqueued_ms=now_ms - 5_000)
    for _ in range(3):
        presence.join(str(theirs.account_id), "Sales", str(uuid.uuid4()), enqueued_ms=now_ms - 600_000)
    redis_client.zadd(f"{prefix}limiter:account:{mine.account_id}", {str(uuid.uuid4()): 1e15})
    running, answered, theirs_call = (str(uuid.uuid4()) for _ in range(3))
    live_calls.register(redis_client, prefix, running, mine.account_id, "c1", direction="inbound",
                        from_number="15550001", to_number="15550002")
    live_calls.register(redis_client, prefix, answered, mine.account_id, "c1", direction="outbound",
                        from_number="15550003", to_number="15550004")
    live_calls.mark_answered(redis_client, prefix, answered)
    live_calls.register(redis_client, prefix, theirs_call, theirs.account_id, "c1", direction="inbound")
    # a call whose controller died: its key expired, its entry in the account's list stays behind
    stale = str(uuid.uuid4())
    redis_client.zadd(live_calls.account_calls_key(prefix, mine.account_id), {stale: time.time()})

    board = Board(redis_client, prefix).snapshot(str(mine.account_id))

    assert [(q["queueId"], q["queue"]) for q in board["queues"]] == [(str(idle), "Archive"), (str(sales), "Sales")]
    row = board["queues"][1]
    assert row["waiting"] == 2 and 42 <= row["longestWaitSeconds"] <= 44
    assert row["agents"] == {"available": 1, "not_ready": 1, "wrap_up": 0, "offline": 0}
    assert row["serviceLevel"]["percent"] is None and row["serviceLevel"]["targetSeconds"] == 20
    assert board["queues"][0]["waiting"] == 0 and board["queues"][0]["agents"]["available"] == 0
    assert board["callsInProgress"] == 1
    assert [(c["callId"], c["phase"], c["direction"], c["from"], c["to"]) for c in board["calls"]] == [
        (answered, "answered", "outbound", "15550003", "15550004"),
        (running, "started", "inbound", "15550001", "15550002")]
    assert str(their_sales) not in str(board) and theirs_call not in str(board)
    assert redis_client.zscore(live_calls.account_calls_key(prefix, mine.account_id), stale) is None


def _enqueued(account: str) -> Envelope:
    return make_envelope("queue.caller.enqueued", {"callId": str(uuid.uuid4()), "queue": "Sales"}, account_id=account)


def test_given_a_page_that_stopped_reading_when_its_events_pile_up_then_its_stream_ends() -> None:
    stream, ended = LiveStream(str(uuid.uuid4())), []
    body = stream.events({"queues": []}, lambda: ended.append(True))
    assert next(body).startswith("retry: 2000\nevent: snapshot\n")
    for _ in range(limits.LIVE_VIEW_STREAM_BUFFER + 1):
        stream.push(": x\n\n")
    assert stream.overflowed
    assert list(body) == []  # cut off: nothing more is written, the page reconnects for a fresh snapshot
    assert ended == [True]


class _Unreadable:
    """A board whose reads fail after the first (the database went away while pages were open)."""

    def __init__(self) -> None:
        self.reads = 0

    def snapshot(self, _account: str) -> dict:
        self.reads += 1
        if self.reads > 1:
            raise ConnectionError("database away")
        return {"queues": []}


def test_given_the_board_cannot_be_read_when_an_event_asks_for_it_then_the_streams_end_cleanly() -> None:
    account = str(uuid.uuid4())
    hub = LiveHub(_Unreadable())  # type: ignore[arg-type]
    stream, first = hub.open(account)
    body = hub.body(stream, first)
    next(body)
    hub.deliver(_enqueued(account))
    assert list(body) == []
    assert hub.streams == {}


class _Numbered:
    """A board that says how many times it was read (its ``at``)."""

    def __init__(self) -> None:
        self.reads = 0

    def snapshot(self, _account: str) -> dict:
        self.reads += 1
        return {"queues": [], "at": self.reads}


def _sent(stream: LiveStream) -> list[tuple[str, Any]]:
    out = []
    while not stream.pending.empty():
        text = stream.pending.get_nowait()
        event, data = text.split("\n", 1)
        out.append((event[len("event: "):], json.loads(data.strip()[len("data: "):])))
    return out


def test_given_open_pages_when_the_bus_is_lost_then_back_then_they_are_told_and_read_the_board_again() -> None:
    account = str(uuid.uuid4())
    hub = LiveHub(_Numbered())  # type: ignore[arg-type]
    stream, first = hub.open(account)
    assert first["at"] == 1

    hub.bus_changed(False)
    assert _sent(stream) == [("bus", {"available": False})]
    hub.bus_changed(True)
    eventually(lambda: stream.pending.qsize() == 2 and not hub._reading, timeout=5,
               what="the bus back and a fresh snapshot pushed")
    assert _sent(stream) == [("bus", {"available": True}), ("snapshot", {"queues": [], "at": 2})]


def test_given_the_bus_away_when_a_page_opens_then_its_snapshot_is_followed_by_bus_unavailable() -> None:
    hub = LiveHub(_Numbered())  # type: ignore[arg-type]
    hub.bus_available = False
    stream, first = hub.open(str(uuid.uuid4()))
    body = hub.body(stream, first)
    assert next(body).startswith("retry: 2000\nevent: snapshot\n")
    assert next(body) == 'event: bus\ndata: {"available":false}\n\n'
    stream.close()
    assert list(body) == []


def test_given_a_burst_of_events_for_three_pages_then_the_board_is_read_once_for_all(
        redis_client, seed) -> None:
    tenant = seed.tenant()
    account = str(tenant.account_id)
    reads: list[int] = []

    class Counting(Board):
        def snapshot(self, account_id: str) -> dict:
            reads.append(1)
            return super().snapshot(account_id)

    hub = LiveHub(Counting(redis_client, get_settings().redis_key_prefix))
    pages = [hub.open(account) for _ in range(3)]
    reads.clear()
    for _ in range(20):
        hub.deliver(_enqueued(account))
    eventually(lambda: all(stream.pending.qsize() >= 1 for stream, _ in pages) and not hub._reading,
               timeout=10, what="the board read and pushed to the three pages")
    assert len(reads) == 1  # 20 events before the read began, three pages: one read
    assert [stream.pending.qsize() for stream, _ in pages] == [1, 1, 1]


def _gateway(api, tenant, address: str) -> str:
    admin = api.login(tenant, "admin")
    carrier = admin.post("/api/carriers", json={"name": f"carrier-{uuid.uuid4().hex[:6]}"}).get_json()
    response = admin.post(f"/api/carriers/{carrier['id']}/gateways", json={"ipv4": address})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def test_given_gateways_of_two_tenants_and_the_platform_when_their_state_changes_then_a_stream_gets_only_its_own(
        api, seed, live_server, owner_engine) -> None:
    from app.events.payloads import gateway_registration, gateway_state
    from app.models import Carrier, Gateway
    from tests.api_management.helpers import insert

    mine, theirs = seed.tenant(), seed.tenant()
    my_gateway, their_gateway = _gateway(api, mine, "203.0.113.21"), _gateway(api, theirs, "203.0.113.22")
    platform = Carrier(id=uuid.uuid4(), account_id=None, name=f"platform-{uuid.uuid4().hex[:6]}")
    platform_gateway = uuid.uuid4()
    insert(owner_engine, platform, Gateway(id=platform_gateway, account_id=None, carrier_id=platform.id,
                                           ipv4="192.0.2.23"))
    stream = Events(live_server, mine.host, _ticket(api, mine))
    eventually(lambda: stream.of("snapshot"), timeout=10, what="the first snapshot")

    # the controller publishes them as platform events (no account on the envelope)
    for gateway in (their_gateway, platform_gateway, uuid.uuid4()):
        emit("system.gateway.down", gateway_state(gateway, carrier_id=None, address="x", state="down",
                                                  sip_status="408", phrase="Request Timeout"))
    emit("system.gateway.down", gateway_state(my_gateway, carrier_id=None, address="203.0.113.21:5060",
                                              state="down", sip_status="408", phrase="Request Timeout"))
    emit("system.gateway.registration", gateway_registration(my_gateway, carrier_id=None, gateway="gw",
                                                             state="FAIL_WAIT", previous="TRYING", sip_status="403"))
    emit("system.gateway.up", gateway_state(my_gateway, carrier_id=None, address="203.0.113.21:5060", state="up"))
    eventually(lambda: len(stream.of("gateway")) == 3, timeout=10, what="my gateway's three changes")

    got = stream.of("gateway")
    assert [g["gatewayId"] for g in got] == [my_gateway] * 3
    assert (got[0]["health"], got[0]["sipStatus"], got[0]["phrase"]) == ("down", "408", "Request Timeout")
    assert got[1]["registration"] == {"state": "FAIL_WAIT", "previous": "TRYING", "sipStatus": "403", "phrase": None}
    assert "health" not in got[1] and got[2]["health"] == "up"
    stream.close()
