"""The event bus end to end: outbox rows in the real PostgreSQL, relayed to the real RabbitMQ
(run vhost), read back by a real consumer."""
from __future__ import annotations

import json
import socket
import uuid

import gevent
import pika
import pytest
from sqlalchemy import select, text, update

from app.db.engine import platform_session
from app.events import outbox
from app.events.consumer import EventConsumer, RecentIds, RedisSeenIds
from app.events.envelope import Envelope, make_envelope
from app.events.exchanges import CALL_EVENTS, MEDIA_EVENTS, SYSTEM_EVENTS, UnknownRoutingKey, exchange_for
from app.events.publisher import OutboxPublisher
from app.events.work_queues import CALLBACK_DISPATCH, CAMPAIGN_OUTCOMES, MEDIA_TRANSCRIPTION, WORK_QUEUES
from app.models import EventOutbox
from app.settings import get_settings
from tests.plugins.eventually import eventually
from tests.plugins.services import amqp_vhost_name, close_vhost_connections

pytestmark = pytest.mark.usefixtures("amqp_vhost")


class Collector:
    """A real consumer on a private queue that records every envelope its handler receives."""

    def __init__(self, bindings, **kwargs):
        self.received: list[Envelope] = []
        self.consumer = EventConsumer(bindings, self.received.append, **kwargs).start()
        assert self.consumer.ready.wait(10), "consumer did not bind its queue"

    def ids(self) -> list[str]:
        return [e.id for e in self.received]

    def wait_for(self, ids, timeout=15.0) -> bool:
        """True once every id arrived; raises NotYet naming the missing count otherwise."""
        wanted = {str(i) for i in ids}
        return eventually(lambda: wanted <= set(self.ids()), timeout=timeout,
                          what=f"consumer received all {len(wanted)} events")

    def stop(self):
        self.consumer.stop()


@pytest.fixture()
def publisher():
    pub = OutboxPublisher(poll_seconds=0.2, backoff_seconds=(0.05, 0.5)).start()
    yield pub
    pub.stop()


def dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def outbox_row(event_id) -> EventOutbox | None:
    with platform_session() as s:
        return s.execute(select(EventOutbox).where(EventOutbox.id == event_id)).scalar_one_or_none()


def test_given_payload_with_uuid_and_datetime_when_enveloped_then_json_is_complete():
    from datetime import datetime, timezone

    account, trace = uuid.uuid4(), uuid.uuid4()
    env = make_envelope("call.started", {"callId": uuid.UUID(int=1),
                                         "at": datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=timezone.utc)},
                        account_id=account, trace_id=trace)
    data = json.loads(env.to_json())
    assert set(data) == {"id", "type", "version", "occurred_at", "source", "account", "trace_id", "payload"}
    assert data["type"] == "call.started" and data["version"] == 1
    assert data["account"] == str(account) and data["trace_id"] == str(trace)
    assert data["payload"] == {"callId": str(uuid.UUID(int=1)), "at": "2026-01-02T03:04:05.006Z"}
    assert data["occurred_at"].endswith("Z")
    assert Envelope.from_json(env.to_json()) == env


def test_given_unserialisable_payload_then_publish_fails_at_the_caller():
    with pytest.raises(TypeError):
        make_envelope("call.started", {"bad": object()})


def test_given_routing_key_on_wrong_exchange_then_refused():
    with pytest.raises(UnknownRoutingKey):
        outbox.publish(SYSTEM_EVENTS, "call.ended", {})
    with pytest.raises(UnknownRoutingKey):
        outbox.publish("nope.events", "call.ended", {})
    assert exchange_for("interaction.queue.entered") == SYSTEM_EVENTS
    assert exchange_for("call.ended") == CALL_EVENTS


def test_given_running_publisher_when_event_published_then_consumer_gets_envelope_and_properties(publisher):
    collector = Collector([(CALL_EVENTS, "call.#")])
    # a raw queue as well, to check the AMQP message properties
    conn = pika.BlockingConnection(pika.URLParameters(get_settings().amqp_url))
    ch = conn.channel()
    q = ch.queue_declare("", exclusive=True).method.queue
    ch.queue_bind(q, CALL_EVENTS, routing_key="call.answered")
    try:
        account, trace = uuid.uuid4(), uuid.uuid4()
        event_id = outbox.publish(CALL_EVENTS, "call.answered", {"callId": "c1"},
                                  account_id=account, trace_id=trace)
        assert collector.wait_for([event_id])
        env = collector.received[collector.ids().index(str(event_id))]
        assert env.type == "call.answered" and env.payload == {"callId": "c1"}
        assert env.account == str(account) and env.trace_id == str(trace)
        # earlier tests may have left call.answered rows for the relay: find ours by id
        def ours():
            method, props, body = ch.basic_get(q, auto_ack=True)
            return (props, body) if method is not None and props.message_id == str(event_id) else None

        props, body = eventually(ours, timeout=5, interval=0.02, what="our call.answered on the raw queue")
        assert props.message_id == str(event_id)
        assert props.delivery_mode == 2
        assert props.content_type == "application/json"
        assert json.loads(body)["id"] == str(event_id)
        assert publisher.flush(10)
        row = outbox_row(event_id)
        assert row.published_at is not None and row.attempts == 1
    finally:
        conn.close()
        collector.stop()


def test_given_events_in_one_transaction_then_delivered_in_insert_order(publisher):
    collector = Collector([(SYSTEM_EVENTS, "interaction.#")])
    try:
        with platform_session() as s:
            ids = [outbox.publish_in(s, SYSTEM_EVENTS, "interaction.step", {"n": n}) for n in range(20)]
        assert collector.wait_for(ids)
        got = [i for i in collector.ids() if uuid.UUID(i) in set(ids)]
        assert got == [str(i) for i in ids]
    finally:
        collector.stop()


def test_given_caller_transaction_rolls_back_then_event_is_never_published(publisher):
    collector = Collector([(CALL_EVENTS, "call.ended")])
    try:
        with pytest.raises(RuntimeError):
            with platform_session() as s:
                rolled_back = outbox.publish_in(s, CALL_EVENTS, "call.ended", {"n": 1})
                raise RuntimeError("caller failed after queuing the event")
        kept = outbox.publish(CALL_EVENTS, "call.ended", {"n": 2})
        assert collector.wait_for([kept])
        assert str(rolled_back) not in collector.ids()
        assert outbox_row(rolled_back) is None
    finally:
        collector.stop()


def test_given_broker_unreachable_when_publishing_then_caller_not_blocked_and_events_arrive_later():
    url = f"amqp://guest:guest@127.0.0.1:{dead_port()}/{amqp_vhost_name()}"
    down = OutboxPublisher(url, poll_seconds=0.1, backoff_seconds=(0.05, 0.2)).start()
    collector = Collector([(CALL_EVENTS, "call.started")])
    try:
        with gevent.Timeout(2):  # publishing is a DB insert: it never waits for the broker
            ids = [outbox.publish(CALL_EVENTS, "call.started", {"n": n}) for n in range(5)]
        eventually(lambda: down.failures >= 2, timeout=5, what="publisher retried the dead broker twice")
        assert down.published == 0
        assert all(outbox_row(i).published_at is None for i in ids)
        down.stop()
        # the broker "comes back": same rows, same ids, relayed by a publisher that can reach it
        up = OutboxPublisher(poll_seconds=0.1).start()
        try:
            assert collector.wait_for(ids)
        finally:
            up.stop()
    finally:
        down.stop()
        collector.stop()


def test_given_server_closes_publisher_connection_then_it_reconnects_and_no_event_is_lost(publisher):
    # a durable named queue keeps what arrives while the consumer itself reconnects
    collector = Collector([(CALL_EVENTS, "call.hold")], queue=f"test-hold-{uuid.uuid4().hex[:8]}")
    try:
        first = [outbox.publish(CALL_EVENTS, "call.hold", {"n": n}) for n in range(10)]
        assert collector.wait_for(first)
        assert publisher.connects == 1
        assert close_vhost_connections(amqp_vhost_name()) >= 1  # broker-side close, incl. the consumer
        second = [outbox.publish(CALL_EVENTS, "call.hold", {"n": n}) for n in range(10, 30)]
        assert collector.consumer.ready.wait(15)
        assert collector.wait_for(second, timeout=20)
        assert publisher.connects >= 2
        # consumers may see a message before the relay commits its batch's published_at
        assert publisher.flush(10)
        with platform_session() as s:
            pending = s.execute(select(EventOutbox.id).where(
                EventOutbox.id.in_(first + second), EventOutbox.published_at.is_(None))).all()
        assert pending == []
    finally:
        collector.stop()


def test_given_rows_republished_with_same_ids_then_consumer_dedup_hands_each_once(publisher):
    """The at-least-once case: confirms arrived but the UPDATE was lost, so rows are relayed
    again with the same ids. The broker really delivers both copies; the consumer drops one."""
    collector = Collector([(CALL_EVENTS, "call.resumed")], seen=RecentIds(capacity=1000))
    try:
        ids = [outbox.publish(CALL_EVENTS, "call.resumed", {"n": n}) for n in range(5)]
        assert collector.wait_for(ids)
        with platform_session() as s:
            s.execute(update(EventOutbox).where(EventOutbox.id.in_(ids)).values(published_at=None))
        publisher.wake()
        eventually(lambda: collector.consumer.duplicates == 5, timeout=10,
                   what="consumer dropped the 5 republished copies")
        assert sorted(collector.ids()) == sorted(str(i) for i in ids)
        assert publisher.flush(10)
        assert all(outbox_row(i).attempts == 2 for i in ids)
    finally:
        collector.stop()


def test_given_redis_seen_ids_then_duplicates_are_detected_across_instances(redis_client):
    a = RedisSeenIds(redis_client, name="test")
    b = RedisSeenIds(redis_client, name="test")
    event_id = str(uuid.uuid4())
    assert a.first_time(event_id) is True
    assert b.first_time(event_id) is False


def test_given_recent_ids_window_full_then_oldest_forgotten():
    seen = RecentIds(capacity=2)
    assert seen.first_time("a") and seen.first_time("b") and seen.first_time("c")
    assert not seen.first_time("c")
    assert seen.first_time("a")  # evicted, so seen again as new


def test_given_old_published_rows_when_pruned_then_unpublished_rows_survive():
    published = outbox.publish(CALL_EVENTS, "call.ended", {"old": True})
    pending = outbox.publish(CALL_EVENTS, "call.ended", {"old": False})
    with platform_session() as s:
        s.execute(update(EventOutbox).where(EventOutbox.id == published)
                  .values(published_at=text("now() - interval '2 days'")))
        s.execute(update(EventOutbox).where(EventOutbox.id == pending)
                  .values(created_at=text("now() - interval '2 days'")))
    with platform_session() as s:
        assert outbox.prune(s, 24 * 3600) >= 1
    assert outbox_row(published) is None
    assert outbox_row(pending) is not None
    with platform_session() as s:  # leave nothing pending for other tests' publishers to chase
        s.execute(update(EventOutbox).where(EventOutbox.id == pending).values(published_at=text("now()")))


def test_given_connection_killed_mid_stream_then_every_event_still_arrives_with_its_id():
    """The path to the broker is cut after a fixed number of bytes of the publish stream
    (mid-batch, possibly mid-frame): confirmed rows stay published, the unconfirmed rest is
    relayed again after reconnecting, with the same ids."""
    from tests.events.tcp_proxy import TcpProxy

    proxy = TcpProxy(("127.0.0.1", 5672)).start()
    url = f"amqp://guest:guest@127.0.0.1:{proxy.port}/{amqp_vhost_name()}"
    collector = Collector([(CALL_EVENTS, "call.started")], queue=f"test-stream-{uuid.uuid4().hex[:8]}")
    pub = OutboxPublisher(url, poll_seconds=0.1, backoff_seconds=(0.05, 0.2))
    try:
        warm = outbox.publish(CALL_EVENTS, "call.started", {"warm": True})
        pub.start()
        assert collector.wait_for([warm])  # connected and idle
        proxy.cut_after(40_000)  # roughly 60-80 messages into the stream below
        with platform_session() as s:
            ids = [outbox.publish_in(s, CALL_EVENTS, "call.started", {"n": n}) for n in range(300)]
        assert collector.wait_for(ids, timeout=30)
        assert proxy.cuts == 1 and pub.connects >= 2 and pub.failures >= 1
        assert pub.flush(10)  # the batch's published_at commits after its last confirm
        with platform_session() as s:
            failed = s.execute(select(EventOutbox.id).where(
                EventOutbox.id.in_(ids), EventOutbox.last_error.is_not(None))).all()
            pending = s.execute(select(EventOutbox.id).where(
                EventOutbox.id.in_(ids), EventOutbox.published_at.is_(None))).all()
        assert len(failed) >= 1   # the row in flight when the path was cut
        assert pending == []
    finally:
        pub.stop()
        collector.stop()
        proxy.stop()


def test_given_network_partition_without_reset_then_publisher_times_out_reconnects_and_delivers():
    """Packets silently dropped (no RST): the confirm wait times out, the publisher abandons
    the connection without blocking on a goodbye, and after the path heals every event
    arrives — the unconfirmed ones again, with the same ids."""
    from tests.events.tcp_proxy import TcpProxy

    proxy = TcpProxy(("127.0.0.1", 5672)).start()
    url = f"amqp://guest:guest@127.0.0.1:{proxy.port}/{amqp_vhost_name()}"
    pub = OutboxPublisher(url, poll_seconds=0.1, backoff_seconds=(0.1, 0.5),
                          confirm_timeout_seconds=1.0, connect_timeout_seconds=1.0).start()
    collector = Collector([(CALL_EVENTS, "call.answered")], queue=f"test-part-{uuid.uuid4().hex[:8]}")
    try:
        before = outbox.publish(CALL_EVENTS, "call.answered", {"phase": "before"})
        assert collector.wait_for([before])
        proxy.blackhole()
        during = [outbox.publish(CALL_EVENTS, "call.answered", {"phase": "during", "n": n})
                  for n in range(5)]
        eventually(lambda: pub.failures >= 1, timeout=10, what="confirm wait timed out in the partition")
        assert any(outbox_row(i).published_at is None for i in during)
        # still partitioned: the relay keeps trying (bounded waits), it is not stuck
        eventually(lambda: pub.failures >= 3, timeout=10, what="relay kept retrying while partitioned")
        proxy.heal()
        assert collector.wait_for(during, timeout=20)
        assert pub.connects >= 2
    finally:
        pub.stop()
        collector.stop()
        proxy.stop()


def test_given_foreign_message_and_failing_handler_then_consumer_keeps_going():
    """A body that is not an envelope is dropped; a handler that raises gets that message
    rejected (not requeued, no poison loop) and the next events are still delivered."""
    seen = []

    def handler(env):
        if env.payload.get("explode"):
            raise RuntimeError("handler bug")
        seen.append(env.id)

    consumer = EventConsumer([(CALL_EVENTS, "call.control.*")], handler).start()
    conn = pika.BlockingConnection(pika.URLParameters(get_settings().amqp_url))
    try:
        assert consumer.ready.wait(10)
        ch = conn.channel()
        ch.basic_publish(CALL_EVENTS, "call.control.start", b"not json at all")
        bad = make_envelope("call.control.start", {"explode": True})
        good = make_envelope("call.control.stop", {"ok": True})
        for env in (bad, good):
            ch.basic_publish(CALL_EVENTS, env.type, env.to_json())
        eventually(lambda: good.id in seen, timeout=10, what="the good envelope after the bad ones")
        assert seen == [good.id] and consumer.delivered == 1
    finally:
        conn.close()
        consumer.stop()


def test_given_no_consumer_ever_started_when_a_work_event_is_published_then_it_waits_in_its_work_queue():
    """A fresh broker: the work queues do not exist yet (deleted here). A recording completed
    before any media worker started, and a call ended before any ``sbc workers``, must still
    reach their queues: the publisher declares every work queue when it connects."""
    conn = pika.BlockingConnection(pika.URLParameters(get_settings().amqp_url))
    ch = conn.channel()
    for queue in WORK_QUEUES:
        ch.queue_delete(queue.name)
    publisher = OutboxPublisher(poll_seconds=0.2, backoff_seconds=(0.05, 0.5)).start()
    try:
        recording = outbox.publish(MEDIA_EVENTS, "media.recording.completed", {"recordingId": "r1"})
        ended = outbox.publish(CALL_EVENTS, "call.ended", {"callId": "c1"})
        assert publisher.flush(10)

        def waiting(queue: str, event_id) -> bool:
            method, props, _ = ch.basic_get(queue, auto_ack=True)
            return method is not None and props.message_id == str(event_id)

        eventually(lambda: waiting(MEDIA_TRANSCRIPTION.name, recording), timeout=5, interval=0.02,
                   what="the recording's job in media.transcription")
        for queue in (CALLBACK_DISPATCH, CAMPAIGN_OUTCOMES):
            eventually(lambda q=queue: waiting(q.name, ended), timeout=5, interval=0.02,
                       what=f"call.ended in {queue.name}")
    finally:
        publisher.stop()
        conn.close()
