"""Concurrency limiter and event-bus figures on this machine: figures, not pass/fail.

- limiter: acquire+release pairs per second against the local Redis, from one greenlet
  (latency-bound: two Lua round trips per pair) and from 50 concurrent greenlets;
- outbox: ``publish()`` calls per second (one INSERT + commit each: what a producer pays; the
  commit's WAL flush dominates) and ``publish_in()`` with 100 events per transaction;
- relay: events per second the publisher greenlet moves from the outbox to RabbitMQ with
  publisher confirms (one confirm round trip per message), measured until the outbox is empty;
- latency: from ``publish()`` returning (committed) to a consumer's handler, p50/p99.

Uses a throw-away database, Redis key prefix and RabbitMQ vhost, removed at the end.
Run: .venv/bin/python benchmarks/limiter_bench.py [--pairs N] [--events N]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

RUN = f"bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
os.environ["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/sbc_{RUN}"
os.environ["SBC_REDIS_KEY_PREFIX"] = f"sbc:{RUN}:"
os.environ["SBC_AMQP_URL"] = f"amqp://guest:guest@127.0.0.1:5672/sbc_{RUN}"

from app.gevent_setup import patch  # noqa: E402

patch()

import gevent  # noqa: E402
import psycopg2  # noqa: E402


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60)


def admin(sql: str) -> None:
    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    conn.autocommit = True
    conn.cursor().execute(sql)
    conn.close()


def bench_limiter(pairs: int) -> None:
    from app.calls.limiter import ConcurrencyLimiter

    limiter = ConcurrencyLimiter()
    account, sp = uuid.uuid4(), uuid.uuid4()
    ids = [str(uuid.uuid4()) for _ in range(pairs)]
    t0 = time.perf_counter()
    for call_id in ids:
        limiter.acquire(call_id, account, 100, sp, 1000)
        limiter.release(call_id)
    seq = pairs / (time.perf_counter() - t0)

    def worker(chunk):
        for call_id in chunk:
            limiter.acquire(call_id, account, 100, sp, 1000)
            limiter.release(call_id)

    ids = [str(uuid.uuid4()) for _ in range(pairs)]
    chunks = [ids[i::50] for i in range(50)]
    t0 = time.perf_counter()
    gevent.joinall([gevent.spawn(worker, c) for c in chunks], raise_error=True)
    par = pairs / (time.perf_counter() - t0)
    print(f"limiter acquire+release, 1 greenlet   : {seq:10.0f} pairs/s ({pairs} pairs)")
    print(f"limiter acquire+release, 50 greenlets : {par:10.0f} pairs/s ({pairs} pairs)")
    limiter.redis.close()


def bench_bus(events: int) -> None:
    from app.db.engine import platform_session
    from app.events import outbox
    from app.events.exchanges import CALL_EVENTS
    from app.events.publisher import OutboxPublisher

    t0 = time.perf_counter()
    for n in range(events):
        outbox.publish(CALL_EVENTS, "call.started", {"n": n, "callId": str(uuid.uuid4())})
    queued = events / (time.perf_counter() - t0)
    print(f"outbox publish() (INSERT+commit each) : {queued:10.0f} events/s ({events} events)")

    t0 = time.perf_counter()
    for start in range(0, events, 100):
        with platform_session() as s:
            for n in range(start, min(start + 100, events)):
                outbox.publish_in(s, CALL_EVENTS, "call.started", {"n": n, "callId": str(uuid.uuid4())})
    batched = events / (time.perf_counter() - t0)
    print(f"outbox publish_in() (100 per commit)  : {batched:10.0f} events/s ({events} events)")
    events *= 2

    with platform_session() as s:
        assert outbox.pending_count(s) == events
    publisher = OutboxPublisher(poll_seconds=0.05)
    t0 = time.perf_counter()
    publisher.start()
    assert publisher.flush(timeout=600), "relay did not drain the outbox"
    relayed = events / (time.perf_counter() - t0)
    publisher.stop()
    print(f"relay to RabbitMQ with confirms       : {relayed:10.0f} events/s ({events} events, "
          f"batch {publisher.batch_size})")
    bench_latency(200)


def bench_latency(n: int) -> None:
    """publish() returning -> consumer handler called, one event at a time (publisher idle)."""
    import gevent.event

    from app.events import outbox
    from app.events.consumer import EventConsumer
    from app.events.exchanges import CALL_EVENTS
    from app.events.publisher import OutboxPublisher

    arrived: dict[str, float] = {}
    signal = gevent.event.Event()

    def handler(env):
        arrived[env.id] = time.perf_counter()
        signal.set()

    consumer = EventConsumer([(CALL_EVENTS, "call.answered")], handler).start()
    consumer.ready.wait(10)
    publisher = OutboxPublisher(poll_seconds=1.0).start()
    publisher.flush(30)
    samples = []
    for i in range(n):
        signal.clear()
        event_id = str(outbox.publish(CALL_EVENTS, "call.answered", {"n": i}))
        sent = time.perf_counter()
        signal.wait(10)
        samples.append((arrived[event_id] - sent) * 1000)
    publisher.stop()
    consumer.stop()
    samples.sort()
    p50, p99 = samples[len(samples) // 2], samples[int(len(samples) * 0.99) - 1]
    print(f"latency commit -> consumer handler     : p50 {p50:6.2f} ms, p99 {p99:6.2f} ms ({n} events)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=20000)
    parser.add_argument("--events", type=int, default=5000)
    args = parser.parse_args()
    name = f"sbc_{RUN}"
    rabbitmqctl("add_vhost", name)
    rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")
    admin(f'CREATE DATABASE "{name}"')
    try:
        from app.db.migrate import upgrade

        upgrade(os.environ["SBC_DATABASE_URL"])
        bench_limiter(args.pairs)
        bench_bus(args.events)
    finally:
        from app.db.engine import reset_engines

        reset_engines()
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        rabbitmqctl("delete_vhost", name)
        import redis

        client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
        keys = list(client.scan_iter(match=f"sbc:{RUN}:*"))
        if keys:
            client.delete(*keys)


if __name__ == "__main__":
    main()
