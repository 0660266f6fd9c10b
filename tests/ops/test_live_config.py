"""heartbeat.interval_seconds and events.outbox_retention_seconds are read at each use (the
controller and workers pass callables over their runtime configuration), so a ``config set``
changes them without a restart."""
from __future__ import annotations

import gevent
import gevent.queue
from sqlalchemy import text

from app.calls.heartbeat import ServiceHeartbeat
from app.events.publisher import OutboxPublisher
from tests.plugins.eventually import eventually


def _beats(owner_conn, instance: str) -> int:
    return owner_conn.execute(text(
        "SELECT count(*) FROM event_outbox WHERE routing_key = 'system.service.heartbeat' "
        "AND body->'payload'->>'instanceId' = :i"), {"i": instance}).scalar_one()


def test_given_a_heartbeat_interval_changed_while_running_then_the_next_beats_follow_it(owner_conn):
    interval = [0.1]
    asked: list[float] = []  # each wait the heartbeat asked for, in order
    go = gevent.queue.Queue()  # the test lets each wait end, one beat at a time

    def sleep(seconds: float) -> None:
        asked.append(seconds)
        go.get()

    beat = ServiceHeartbeat("workers", interval_seconds=lambda: interval[0], sleep=sleep).start()
    try:
        for beats in range(1, 4):
            go.put(None)
            eventually(lambda: len(asked) == beats + 1, what=f"heartbeat {beats} sent")
        assert _beats(owner_conn, beat.instance_id) == 3
        assert asked == [0.1, 0.1, 0.1, 0.1]
        interval[0] = 30.0
        go.put(None)  # the beat already waiting lands; the wait after it is the new interval
        eventually(lambda: len(asked) == 5, what="the wait after the change")
        assert asked[-1] == 30.0
        assert _beats(owner_conn, beat.instance_id) == 4
    finally:
        beat.stop()


def test_given_a_retention_changed_while_running_then_the_next_prune_uses_it(owner_conn, amqp_vhost):
    owner_conn.execute(text(
        "INSERT INTO event_outbox (id, exchange, routing_key, body, created_at, published_at) VALUES "
        "(gen_random_uuid(), 'system.events', 'system.config.changed', '{\"payload\": {\"keys\": [\"probe-retention\"]}}', "
        "now() - interval '2 hours', now() - interval '2 hours')"))
    owner_conn.commit()
    retention = [86400.0]
    relay = OutboxPublisher(retention_seconds=lambda: retention[0], prune_every_seconds=0.0)
    count = "SELECT count(*) FROM event_outbox WHERE body->'payload'->'keys' ? 'probe-retention'"
    relay._maybe_prune()
    assert owner_conn.execute(text(count)).scalar_one() == 1   # a day of retention keeps it
    retention[0] = 3600.0
    relay._maybe_prune()
    assert owner_conn.execute(text(count)).scalar_one() == 0   # an hour does not
