"""Gateway health from sofia::gateway_state (replayed from the real FreeSWITCH capture),
kept in the run's Redis key space, published through the real outbox."""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from app.db.engine import platform_session
from app.events.exchanges import exchange_for
from app.events.payloads import emit
from app.models import EventOutbox
from app.routing.gateway_health import GATEWAY_STATE, GatewayHealth
from app.routing.lcr import compile_table, gateway_name
from esl.protocol import Event, FrameParser
from tests.plugins.eventually import eventually
from tests.routing.world import build_rows, key_id, load_world

# the repository's copy of ../shared/esl-captures/gateway_state (tests/fixtures/esl_captures)
CAPTURE = Path(__file__).resolve().parents[1] / "fixtures" / "esl_captures" / "gateway_state" / "received.raw"


class Collector:
    """Stands in for ``app.events.payloads.emit`` and checks it is called the same way."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict]] = []

    def __call__(self, routing_key, payload, *, account_id=None, trace_id=None, session=None):
        self.calls.append((exchange_for(routing_key), routing_key, payload))


def _captured_events(rename: dict[str, str]) -> list[Event]:
    """The capture's CUSTOM events, with the lab gateway names mapped to ours."""
    events = []
    for frame in FrameParser().feed(CAPTURE.read_bytes()):
        if frame.content_type != "text/event-plain":
            continue
        event = frame.event()
        headers = [(k, rename.get(v, v) if k == "Gateway" else v) for k, v in event.headers]
        events.append(Event(headers, event.body))
    return events


@pytest.fixture()
def health(redis_client, redis_prefix):
    collector = Collector()
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:6]}:"
    return GatewayHealth(redis_client, prefix, collector), collector


def test_given_capture_replay_when_handled_then_down_and_up_published_once_per_change(health):
    gw_up, gw_dead = uuid.uuid4(), uuid.uuid4()
    events = _captured_events({"gw_up": gateway_name(gw_up), "gw_dead": gateway_name(gw_dead)})
    tracker, collector = health
    for event in events:
        tracker.on_event(event)
    keys = [(rk, p["gatewayId"]) for _, rk, p in collector.calls]
    # capture: gw_dead DOWN; gw_up DOWN then UP. gateway_add resets to up (no change: new).
    assert keys == [
        ("system.gateway.down", str(gw_dead)),
        ("system.gateway.down", str(gw_up)),
        ("system.gateway.up", str(gw_up)),
    ]
    assert all(ex == "system.events" for ex, _, _ in collector.calls)
    assert collector.calls[0][2]["sipStatus"] == "503"
    assert collector.calls[0][2]["phrase"] == "Service Unavailable"
    assert tracker.down_gateway_ids() == frozenset({gw_dead})


def test_given_repeated_down_events_when_handled_then_published_only_on_change(health):
    tracker, collector = health
    gid = uuid.uuid4()
    event = Event([("Event-Name", "CUSTOM"), ("Event-Subclass", GATEWAY_STATE),
                   ("Gateway", gateway_name(gid)), ("State", "NOREG"), ("Ping-Status", "DOWN"),
                   ("Status", "503"), ("Phrase", "Service Unavailable")])
    assert tracker.on_event(event) is True
    assert tracker.on_event(event) is False
    assert len(collector.calls) == 1


def test_given_two_controllers_sharing_redis_when_both_see_the_event_then_one_publish(redis_client, redis_prefix):
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:6]}:"
    a, b = Collector(), Collector()
    first, second = GatewayHealth(redis_client, prefix, a), GatewayHealth(redis_client, prefix, b)
    gid = uuid.uuid4()
    event = Event([("Event-Subclass", GATEWAY_STATE), ("Gateway", gateway_name(gid)), ("Ping-Status", "DOWN")])
    first.on_event(event)
    second.on_event(event)
    assert len(a.calls) + len(b.calls) == 1
    assert second.down_gateway_ids() == frozenset({gid})


def test_given_foreign_gateway_name_when_handled_then_ignored(health):
    tracker, collector = health
    event = Event([("Event-Subclass", GATEWAY_STATE), ("Gateway", "gw_up"), ("Ping-Status", "DOWN")])
    assert tracker.on_event(event) is None
    assert collector.calls == []


def test_given_down_gateway_readded_when_gateway_add_then_it_is_up_again(health):
    tracker, collector = health
    gid = uuid.uuid4()
    tracker.set_state(gid, "down")
    tracker.on_event(Event([("Event-Subclass", "sofia::gateway_add"), ("Gateway", gateway_name(gid))]))
    assert tracker.state(gid) == "up"
    assert [rk for _, rk, _ in collector.calls] == ["system.gateway.down", "system.gateway.up"]


def test_given_gateway_deleted_when_handled_then_state_forgotten_without_publishing(health):
    tracker, collector = health
    gid = uuid.uuid4()
    tracker.set_state(gid, "down")
    tracker.on_event(Event([("Event-Subclass", "sofia::gateway_delete"), ("Gateway", gateway_name(gid))]))
    assert tracker.down_gateway_ids() == frozenset()
    assert len(collector.calls) == 1


def test_given_down_gateway_in_redis_when_lcr_explains_then_it_is_skipped(health):
    tracker, _ = health
    table = compile_table(build_rows(load_world()))
    tracker.set_state(key_id("bravo_1"), "down")
    decision = table.explain("13105550100", key_id("acme"), tracker.down_gateway_ids())
    assert key_id("bravo_1") not in [a.gateway_id for a in decision.attempts]
    tracker.set_state(key_id("bravo_1"), "up")
    decision = table.explain("13105550100", key_id("acme"), tracker.down_gateway_ids())
    assert decision.attempts[0].gateway_id == key_id("bravo_1")


def test_given_real_outbox_when_gateway_goes_down_then_event_row_is_queued(redis_client, redis_prefix):
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:6]}:"
    carrier = uuid.uuid4()
    tracker = GatewayHealth(redis_client, prefix, emit,
                            describe=lambda g: (carrier, "192.0.2.7:5080") if g == gid else None)
    gid = uuid.uuid4()
    tracker.set_state(gid, "down", status="503", phrase="Service Unavailable", gateway=gateway_name(gid))
    with platform_session() as session:
        rows = session.scalars(select(EventOutbox).where(EventOutbox.routing_key == "system.gateway.down")).all()
    mine = [r for r in rows if r.body["payload"]["gatewayId"] == str(gid)]
    assert len(mine) == 1 and mine[0].exchange == "system.events"
    payload = mine[0].body["payload"]
    assert (payload["sipStatus"], payload["carrierId"], payload["address"]) == ("503", str(carrier), "192.0.2.7:5080")
    assert payload["gateway"] == gateway_name(gid) and payload["state"] == "down" and payload["at"]


def test_given_captured_status_tables_when_parsed_then_up_and_down():
    from app.routing.gateway_health import parse_gateway_status

    transcript = CAPTURE
    bodies = [f.body_text for f in FrameParser().feed(transcript.read_bytes())
              if f.content_type == "api/response" and "PingState" in f.body_text]
    assert [parse_gateway_status(b) for b in bodies] == ["up", "down"]
    assert parse_gateway_status("Invalid Gateway!\n") is None


def test_given_stale_down_after_freeswitch_restart_when_reconciled_then_up_is_restored(health, inbound_sim):
    from esl.inbound import InboundConnection

    tracker, collector = health
    gid_up, gid_down = uuid.uuid4(), uuid.uuid4()
    tracker.set_state(gid_up, "down")  # left over from before the restart
    inbound_sim.gateways[gateway_name(gid_up)] = True
    inbound_sim.gateways[gateway_name(gid_down)] = False
    esl = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False)
    esl.connect()
    try:
        seen = tracker.reconcile(esl, [gateway_name(gid_up), gateway_name(gid_down), "gw_unknown"])
    finally:
        esl.close()
    assert seen == {gateway_name(gid_up): "up", gateway_name(gid_down): "down"}
    assert tracker.down_gateway_ids() == frozenset({gid_down})
    assert [rk for _, rk, _ in collector.calls] == ["system.gateway.down", "system.gateway.up", "system.gateway.down"]


def test_given_inbound_esl_when_simulated_gateway_goes_down_and_up_then_state_follows(health, inbound_sim):
    from app.routing.gateway_health import HEALTH_EVENTS
    from esl.inbound import InboundConnection

    tracker, collector = health
    gid = uuid.uuid4()
    esl = InboundConnection(*inbound_sim.address, "ClueCon", events=HEALTH_EVENTS, reconnect=False)
    tracker.attach(esl)
    esl.connect()
    try:
        inbound_sim.set_gateway(gateway_name(gid), False)
        eventually(lambda: tracker.state(gid) == "down", timeout=5, interval=0.02, what="gateway tracked down")
        inbound_sim.set_gateway(gateway_name(gid), True)
        eventually(lambda: tracker.state(gid) == "up", timeout=5, interval=0.02, what="gateway tracked up again")
    finally:
        esl.close()
    assert [rk for _, rk, _ in collector.calls] == ["system.gateway.down", "system.gateway.up"]
