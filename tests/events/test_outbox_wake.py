"""An urgent event committed by a process that runs no relay (``sbc api``) wakes the relays of
the other processes at once (PostgreSQL NOTIFY, app/events/wake_listener.py) instead of waiting
for their next outbox poll; the row stays the durable copy."""
from __future__ import annotations

import gevent
import pytest

from app.db.engine import platform_session
from app.events import outbox
from app.events.exchanges import CALL_EVENTS
from app.events.publisher import OutboxPublisher
from app.settings import get_settings
from tests.events.test_bus import Collector, outbox_row

pytestmark = pytest.mark.usefixtures("amqp_vhost")

LONG_POLL = 600.0  # the relay would not look again on its own during the test


@pytest.fixture()
def far_relay():
    """A relay as in another process: not woken by this process's commits, polling rarely,
    listening for NOTIFY."""
    pub = OutboxPublisher(poll_seconds=LONG_POLL, listen_dsn=get_settings().platform_database_url).start()
    outbox.remove_waker(pub.wake)
    assert pub._listener.listening.wait(10), "the relay never listened"
    gevent.sleep(0.3)  # its first (empty) batch is done: it now waits for work
    yield pub
    pub.stop()


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


def test_given_an_urgent_event_rolled_back_then_nothing_is_notified_or_published(far_relay):
    with pytest.raises(RuntimeError):
        with platform_session() as session:
            event_id = outbox.publish_in(session, CALL_EVENTS, "call.control", {"action": "hold"}, urgent=True)
            raise RuntimeError("the request failed after queueing")
    gevent.sleep(0.5)
    assert far_relay._listener.wakes == 0 and outbox_row(event_id) is None


def test_given_an_ordinary_event_then_no_other_relay_is_woken(far_relay):
    event_id = _queue(urgent=False)
    gevent.sleep(0.5)
    assert far_relay._listener.wakes == 0
    assert outbox_row(event_id).published_at is None  # left for the poll (or this process's relay)


def test_given_the_listener_connection_killed_then_it_listens_again_and_wakes_the_relay(far_relay, owner_engine):
    from sqlalchemy import text

    listener = far_relay._listener
    with owner_engine.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE application_name = 'sbc outbox wake' AND datname = current_database()"))
        conn.commit()
    with gevent.Timeout(10, False):
        while listener.listening.is_set():
            gevent.sleep(0.05)
    assert listener.listening.wait(15), "the listener did not come back"
    assert listener.connects == 2
    collector = Collector([(CALL_EVENTS, "call.control")])
    try:
        event_id = _queue(urgent=True)
        assert collector.wait_for([event_id], timeout=20)
    finally:
        collector.stop()
