"""``queue.metrics`` (app/contact/queue_metrics.py): the figures of a queue from the Redis
line, the members' states and the answered waits, emitted once per period however many
controllers run. Real PostgreSQL (queues, agents, the outbox) and Redis."""
from __future__ import annotations

import time
import uuid

import gevent
import redis as redis_lib
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.contact.presence import Presence
from app.contact.queue_metrics import QueueMetricsEmitter, load_queues
from app.contact.queue_stats import QueueStats
from app.events.payloads import emit
from app.models import Agent, AgentQueue, Queue, User
from app.settings import get_settings
from tests.plugins.eventually import eventually


def _tenant_queue(seed, owner_engine, states: list[str]) -> tuple[str, Queue, list[Agent]]:
    tenant = seed.tenant()
    queue = Queue(id=uuid.uuid4(), account_id=tenant.account_id, name="sales", service_level_seconds=10,
                  strategy="round_robin")
    agents = []
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        db.add(queue)
        for n, state in enumerate(states):
            user = User(id=uuid.uuid4(), account_id=tenant.account_id, username=f"m{n}", password_hash="x", role="agent")
            db.add(user)
            db.flush()
            agent = Agent(id=uuid.uuid4(), account_id=tenant.account_id, user_id=user.id, state=state)
            db.add(agent)
            db.flush()
            db.add(AgentQueue(account_id=tenant.account_id, agent_id=agent.id, queue_id=queue.id))
            agents.append(agent)
    return str(tenant.account_id), queue, agents


def _mine(rows, queue: Queue):
    return [r for r in rows if r.queue_id == str(queue.id)]


def _unlocked(emitter: QueueMetricsEmitter, now: float) -> float:
    """Forget that another test of this run already emitted in this period."""
    emitter.presence.redis.delete(emitter.lock_key(int(now // emitter.period * emitter.period)))
    return now


def test_given_a_queue_with_callers_agents_and_answers_then_its_metrics_say_so(seed, owner_engine, redis_client):
    account, queue, agents = _tenant_queue(seed, owner_engine, ["available", "available", "not_ready", "wrap_up"])
    prefix = get_settings().redis_key_prefix
    presence, stats = Presence(redis_client, prefix), QueueStats(redis_client, prefix)
    now_ms = int(time.time() * 1000)
    presence.join(account, "sales", "c1", enqueued_ms=now_ms - 95_000)
    presence.join(account, "sales", "c2", priority=3, enqueued_ms=now_ms - 10_000)  # first in line, not longest
    presence.agent_idle(account, str(agents[1].id))
    presence.claim(account, "sales", "c2", [])  # nothing to claim: unchanged
    redis_client.set(presence.engaged_prefix(account) + str(agents[0].id), "c0", ex=60)
    for n, wait in enumerate((4_000, 9_000, 30_000, 12_000)):
        stats.answered(account, "sales", f"a{n}", wait, at_ms=now_ms - 1000)
    sent: list[tuple[str, dict]] = []
    emitter = QueueMetricsEmitter(redis_client, prefix, emit=lambda key, payload, **_: sent.append((key, payload)),
                                  loader=lambda: _mine(load_queues(), queue))
    assert emitter.run_once(now=_unlocked(emitter, now_ms / 1000)) == 1
    ((key, payload),) = sent
    assert key == "queue.metrics"
    assert payload["queueId"] == str(queue.id) and payload["accountSid"] == account and payload["strategy"] == "round_robin"
    assert payload["waiting"] == 2 and payload["longestWaitSeconds"] == 95
    assert payload["agents"] == {"available": 2, "not_ready": 1, "wrap_up": 1, "offline": 0}
    assert payload["agentsEngaged"] == 1
    assert payload["serviceLevel"] == {"targetSeconds": 10, "windowSeconds": 900, "answered": 4,
                                       "withinTarget": 2, "percent": 50.0}


def test_given_two_controllers_in_the_same_period_then_only_one_emits(seed, owner_engine):
    _, queue, _ = _tenant_queue(seed, owner_engine, ["available"])
    prefix = get_settings().redis_key_prefix
    sent: list[str] = []
    emitters = [QueueMetricsEmitter(redis_lib.Redis.from_url(get_settings().redis_url), prefix,
                                    emit=lambda key, payload, **_: sent.append(payload["queueId"]),
                                    loader=lambda: _mine(load_queues(), queue), period_seconds=3600)
                for _ in range(2)]
    now = _unlocked(emitters[0], time.time())
    emitters[0].presence.redis.delete(emitters[0].lock_key(int((now + 3600) // 3600 * 3600)))
    jobs = [gevent.spawn(e.run_once, now) for e in emitters for _ in range(3)]
    gevent.joinall(jobs)
    assert sorted(j.value for j in jobs) == [0, 0, 0, 0, 0, 1] and sent == [str(queue.id)]
    assert emitters[0].run_once(now + 3600) == 1  # the next period emits again


def test_given_the_real_outbox_then_queue_metrics_is_an_account_event(seed, owner_engine, owner_conn, redis_client):
    account, queue, _ = _tenant_queue(seed, owner_engine, ["offline"])
    emitter = QueueMetricsEmitter(redis_client, get_settings().redis_key_prefix, emit=emit,
                                  loader=lambda: _mine(load_queues(), queue))
    assert emitter.run_once(_unlocked(emitter, time.time())) == 1
    rows = eventually(lambda: owner_conn.execute(text(
        "SELECT routing_key, body FROM event_outbox WHERE routing_key = 'queue.metrics' "
        "AND body->'payload'->>'queueId' = :q"), {"q": str(queue.id)}).all(), timeout=3,
        what="the queue.metrics event")
    ((key, body),) = rows
    assert body["payload"]["waiting"] == 0 and body["payload"]["serviceLevel"]["percent"] is None
    assert body["account"] == account and key == "queue.metrics"


def test_given_a_queue_without_members_or_callers_then_no_metrics_are_emitted(seed, owner_engine, redis_client):
    _, queue, _ = _tenant_queue(seed, owner_engine, [])
    sent: list = []
    emitter = QueueMetricsEmitter(redis_client, get_settings().redis_key_prefix,
                                  emit=lambda *a, **k: sent.append(a), loader=lambda: _mine(load_queues(), queue))
    assert emitter.run_once(_unlocked(emitter, time.time())) == 0 and sent == []
