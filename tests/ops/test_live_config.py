"""heartbeat.interval_seconds and events.outbox_retention_seconds are read at each use (the
controller and workers pass callables over their runtime configuration), so a ``config set``
changes them without a restart."""
from __future__ import annotations

import gevent
from sqlalchemy import text

from app.calls.heartbeat import ServiceHeartbeat
from app.events.publisher import OutboxPublisher


def _beats(owner_conn, instance: str) -> int:
    return owner_conn.execute(text(
        "SELECT count(*) FROM event_outbox WHERE routing_key = 'system.service.heartbeat' "
        "AND body->'payload'->>'instanceId' = :i"), {"i": instance}).scalar_one()


def test_given_a_heartbeat_interval_changed_while_running_then_the_next_beats_follow_it(owner_conn):
    interval = [0.1]
    beat = ServiceHeartbeat("workers", interval_seconds=lambda: interval[0]).start()
    try:
        gevent.sleep(0.55)
        fast = _beats(owner_conn, beat.instance_id)
        assert fast >= 3
        interval[0] = 30.0
        gevent.sleep(0.6)  # at most the beat already waiting lands
        assert _beats(owner_conn, beat.instance_id) <= fast + 1
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
