"""An urgent event committed by a process that runs no relay (``sbc api``) wakes the relays of
the other processes at once (PostgreSQL NOTIFY, app/events/wake_listener.py) instead of waiting
for their next outbox poll; the row stays the durable copy."""
from __future__ import annotations

import uuid

import psycopg2
import psycopg2.extensions
import pytest

from app.db.engine import platform_session
from app.events import outbox
from app.events.exchanges import CALL_EVENTS
from app.events.publisher import OutboxPublisher
from app.settings import get_settings
from tests.events.test_bus import Collector, outbox_row
from tests.plugins.eventually import eventually

pytestmark = pytest.mark.usefixtures("amqp_vhost")

LONG_POLL = 600.0  # the relay would not look again on its own during the test


@pytest.fixture()
def far_relay():
    """A relay as in another process: not woken by this process's commits, polling rarely,
    listening for NOTIFY."""
    pub = OutboxPublisher(poll_seconds=LONG_POLL, listen_dsn=get_settings().platform_database_url).start()
    outbox.remove_waker(pub.wake)
    assert pub._listener.listening.wait(10), "the relay never listened"
    eventually(lambda: pub._idle.is_set() and not pub._wake.is_set(), timeout=10,
               what="the relay's first (empty) batch done: it now waits for work")
    yield pub
    pub.stop()


class NotifyWatch:
    """This test's own LISTEN on the relays' channel: what every relay would be told, in commit
    order. A negative ("no NOTIFY was sent") is proved by a marker NOTIFY sent after it: once
    the marker arrives, anything committed before it has arrived too."""

    def __init__(self) -> None:
        self.conn = psycopg2.connect(get_settings().platform_database_url,
                                     application_name="test outbox watch")
        self.conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
        with self.conn.cursor() as cur:
            cur.execute(f"LISTEN {outbox.NOTIFY_CHANNEL}")
        self.payloads: list[str] = []

    def before_marker(self) -> list[str]:
        """Send a marker NOTIFY; return the payloads received ahead of it ("" = a bare NOTIFY,
        as ``publish_in(urgent=True)`` sends)."""
        marker = f"marker-{uuid.uuid4().hex}"
        with self.conn.cursor() as cur:
            cur.execute(f"NOTIFY {outbox.NOTIFY_CHANNEL}, %s", (marker,))

        def marker_seen() -> bool:
            self.conn.poll()  # idle and autocommit: reads what arrived, never blocks
            self.payloads += [n.payload for n in self.conn.notifies]
            self.conn.notifies.clear()
            return marker in self.payloads

        eventually(marker_seen, timeout=10, what="the marker NOTIFY")
        return self.payloads[:self.payloads.index(marker)]

    def close(self) -> None:
        self.conn.close()


@pytest.fixture()
def notify_watch():
    watch = NotifyWatch()
    yield watch
    watch.close()


def _queue(urgent: bool):
    with platform_session() as session:
        return outbox.publish_in(session, CALL_EVENTS, "call.control", {"action": "hold"}, urgent=urgent)


def test_given_an_urgent_event_committed_then_a_listening_relay_elsewhere_publishes_it_without_its_poll(far_relay):
    collector = Collector([(CALL_EVENTS, "call.control")])
    try:
        event_id = _queue(urgent=True)
        assert collector.wait_for([event_id], timeout=20), "the NOTIFY did not wake the relay"
        assert far_relay._listener.wakes >= 1
        assert outbox_row(event_id).published_at is not None
    finally:
        collector.stop()


def test_given_an_urgent_event_rolled_back_then_nothing_is_notified_or_published(far_relay, notify_watch):
    with pytest.raises(RuntimeError):
        with platform_session() as session:
            event_id = outbox.publish_in(session, CALL_EVENTS, "call.control", {"action": "hold"}, urgent=True)
            raise RuntimeError("the request failed after queueing")
    assert outbox_row(event_id) is None
    assert notify_watch.before_marker() == []  # the rolled-back NOTIFY never went out
    eventually(lambda: far_relay._listener.wakes >= 1, timeout=10, what="the relay woken by the marker")
    assert far_relay._listener.wakes == 1  # by the marker alone


def test_given_an_ordinary_event_then_no_other_relay_is_woken(far_relay, notify_watch):
    event_id = _queue(urgent=False)
    assert outbox_row(event_id).published_at is None  # left for the poll (or this process's relay)
    assert notify_watch.before_marker() == []  # committed, and no relay elsewhere was told
    eventually(lambda: far_relay._listener.wakes >= 1, timeout=10, what="the relay woken by the marker")
    assert far_relay._listener.wakes == 1  # by the marker alone


def test_given_the_listener_connection_killed_then_it_listens_again_and_wakes_the_relay(far_relay, owner_engine):
    from sqlalchemy import text

    listener = far_relay._listener
    with owner_engine.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE application_name = 'sbc outbox wake' AND datname = current_database()"))
        conn.commit()
    eventually(lambda: not listener.listening.is_set() or listener.connects == 2, timeout=10,
               what="the listener noticing its connection was killed")
    assert listener.listening.wait(15), "the listener did not come back"
    assert listener.connects == 2
    collector = Collector([(CALL_EVENTS, "call.control")])
    try:
        event_id = _queue(urgent=True)
        assert collector.wait_for([event_id], timeout=20)
    finally:
        collector.stop()
