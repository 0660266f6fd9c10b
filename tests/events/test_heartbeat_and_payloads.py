"""Service heartbeat and payload builders, over the real outbox and broker."""
from __future__ import annotations

import uuid

import pytest

from app.calls.heartbeat import ServiceHeartbeat
from app.events import payloads
from app.events.consumer import EventConsumer
from app.events.exchanges import CALL_EVENTS, SYSTEM_EVENTS
from app.events.publisher import OutboxPublisher
from tests.plugins.eventually import eventually


@pytest.mark.usefixtures("amqp_vhost")
def test_given_service_started_and_stopped_then_up_heartbeats_down_arrive_in_order():
    got = []
    consumer = EventConsumer([(SYSTEM_EVENTS, "system.service.*")], got.append).start()
    publisher = OutboxPublisher(poll_seconds=0.1).start()
    try:
        assert consumer.ready.wait(10)
        beat = ServiceHeartbeat("controller", interval_seconds=0.2,
                                details=lambda: {"liveCalls": 3}).start()
        eventually(lambda: len(beat.sent) >= 3, timeout=5, what="up and two heartbeats sent")
        beat.stop()
        mine = lambda: [e for e in got if e.payload["instanceId"] == beat.instance_id]  # noqa: E731
        eventually(lambda: mine() and mine()[-1].type == "system.service.down", timeout=10,
                   what="system.service.down received last")
        types = [e.type for e in mine()]
        assert types[0] == "system.service.up" and types[-1] == "system.service.down"
        assert types.count("system.service.heartbeat") >= 2
        assert mine()[1].payload["details"] == {"liveCalls": 3}
        assert [uuid.UUID(e.id) for e in mine()] == beat.sent
    finally:
        publisher.stop()
        consumer.stop()


@pytest.mark.usefixtures("amqp_vhost")
def test_given_emit_then_exchange_is_chosen_from_the_routing_key():
    got = []
    consumer = EventConsumer([(CALL_EVENTS, "call.answered"), (SYSTEM_EVENTS, "system.gateway.#")],
                             got.append).start()
    publisher = OutboxPublisher(poll_seconds=0.1).start()
    try:
        assert consumer.ready.wait(10)
        a = payloads.emit("call.answered", payloads.call_answered("c-1"), account_id=uuid.uuid4())
        b = payloads.emit("system.gateway.down", payloads.gateway_state(
            uuid.uuid4(), carrier_id=uuid.uuid4(), address="192.0.2.10:5060", state="DOWN"))
        eventually(lambda: {str(a), str(b)} <= {e.id for e in got}, timeout=10,
                   what="both events on their exchanges")
        by_id = {e.id: e for e in got}
        assert by_id[str(a)].payload["callId"] == "c-1"
        assert by_id[str(b)].payload["state"] == "DOWN" and by_id[str(b)].account is None
    finally:
        publisher.stop()
        consumer.stop()
