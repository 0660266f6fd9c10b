"""Callback dispatcher throughput (app/contact/callbacks.py): figures, not pass/fail.

Against a throw-away PostgreSQL database (migrated with the real chain) and a throw-away Redis
key prefix: one tenant, one queue, 200 available registered agents with SIP credentials, and
10,000 pending callbacks (priorities 0-9, distinct request times). Dispatcher processes (real
OS processes, each its own PostgreSQL and Redis connections) loop over the agents, as the
``agent.state.changed`` consumer would, calling ``dispatch_for_agent``; each dispatched attempt
is then ended the way the controller and the bus end it — ``record_callback_attempt`` (the
originator: every 5th customer not reached, so it comes back as a retry) and ``call_ended``
(the dispatcher frees the agent) — so the agent is free for either dispatcher again.
Retry delay 0 here (the real one only spaces the retries out).

Printed per run (1 dispatcher, then 2 racing over the same rows and agents):
- callbacks finished per second (completed or failed) and attempts dialled per second, over
  the wall time from the first dispatch of any process to the last attempt ended (process
  start-up excluded);
- the latency of one successful dispatch (``dispatch_for_agent``: select, claim, dialing,
  outbox, commit) p50/p99 per dispatcher; the rest of an attempt's time is the simulated
  outcome and the agent's release (about as many round trips again);
- double dispatches: (callback, attempt) pairs that got more than one ``call.originate`` — must
  be 0; callbacks left unfinished (lost) — must be 0; attempts per dispatcher.

Run: .venv/bin/python benchmarks/callback_dispatch_bench.py [--callbacks N] [--agents N]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

DB_NAME = os.environ.get("SBC_BENCH_DB") or f"sbc_bench_callbacks_{os.getpid()}"
os.environ["SBC_BENCH_DB"] = DB_NAME
os.environ["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/{DB_NAME}"
os.environ.setdefault("SBC_REDIS_KEY_PREFIX", f"sbc:bench_cb_{os.getpid()}:")
os.environ.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)

from app.gevent_setup import patch  # noqa: E402

patch()

import psycopg2  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402

PASSWORD = "bench-password-123"
NOT_REACHED_EVERY = 5


def _maintenance(sql: str) -> None:
    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def _owner_engine():
    from app.db.urls import sqlalchemy_url
    from app.settings import get_settings

    return create_engine(sqlalchemy_url(get_settings().database_url))


def _presence():
    import redis

    from app.contact.presence import Presence
    from app.settings import get_settings

    return Presence(redis.Redis.from_url(get_settings().redis_url), get_settings().redis_key_prefix)


def _seed_agents(account_id: uuid.UUID, subdomain: str, agents: int) -> tuple[uuid.UUID, list[str]]:
    from app.crypto import encrypt_secret

    engine = _owner_engine()
    secret = encrypt_secret("pw")
    with engine.begin() as conn:
        queue_id = conn.execute(text("INSERT INTO queues (account_id, name, wrap_up_seconds) "
                                     "VALUES (:a, 'callbacks', 0) RETURNING id"), {"a": account_id}).scalar()
        ids = []
        for n in range(agents):
            user_id = uuid.uuid4()
            conn.execute(text("INSERT INTO users (id, account_id, username, password_hash, role) "
                              "VALUES (:u, :a, :n, 'x', 'agent')"), {"u": user_id, "a": account_id, "n": f"ag{n}"})
            agent_id = conn.execute(text(
                "INSERT INTO agents (account_id, user_id, state, sip_username, sip_password_encrypted) "
                "VALUES (:a, :u, 'available', :s, :p) RETURNING id"),
                {"a": account_id, "u": user_id, "s": f"ag{n:04d}{uuid.uuid4().hex[:6]}", "p": secret}).scalar()
            conn.execute(text("INSERT INTO agent_queues (account_id, agent_id, queue_id) VALUES (:a, :g, :q)"),
                         {"a": account_id, "g": agent_id, "q": queue_id})
            ids.append(str(agent_id))
        rows = conn.execute(text("SELECT id, sip_username FROM agents WHERE account_id = :a"),
                            {"a": account_id}).all()
    engine.dispose()
    presence = _presence()
    for n, (agent_id, sip) in enumerate(rows):
        presence.registered(subdomain, sip, 3600)
    return queue_id, ids


def _reset(account_id: uuid.UUID, queue_id: uuid.UUID, agent_ids: list[str], callbacks: int) -> None:
    """Fresh callbacks, an empty outbox, every agent idle and unengaged."""
    engine = _owner_engine()
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM callbacks WHERE account_id = :a"), {"a": account_id})
        conn.execute(text("DELETE FROM event_outbox"))
        conn.execute(text("""
            INSERT INTO callbacks (account_id, queue_id, phone_number, priority, requested_at)
            SELECT :a, :q, '4930' || lpad(g::text, 7, '0'), g % 10, now() - make_interval(secs => g)
            FROM generate_series(1, :n) AS g"""), {"a": account_id, "q": queue_id, "n": callbacks})
        conn.execute(text("ANALYZE callbacks"))
    engine.dispose()
    presence = _presence()
    now_ms = int(time.time() * 1000)
    for n, agent_id in enumerate(agent_ids):
        presence.release(str(account_id), agent_id)
        presence.agent_idle(str(account_id), agent_id, since_ms=now_ms - 100_000 + n)


def child(index: int, account_id: str, agent_ids: list[str]) -> None:
    """One dispatcher process: prints {"attempts": N} when no callback is left to dial."""
    from app.calls.originate import OriginateRequest, record_callback_attempt
    from app.contact.callbacks import call_ended, dispatch_for_agent
    from app.events.envelope import Envelope
    from app.events.payloads import call_originate

    presence = _presence()
    order = agent_ids if index % 2 == 0 else list(reversed(agent_ids))
    attempts = idle_rounds = 0
    first = last = 0.0
    latencies: list[float] = []  # dispatch_for_agent calls that dialled
    while idle_rounds < 3:
        progressed = False
        for agent_id in order:
            started = time.perf_counter()
            done = dispatch_for_agent(account_id, agent_id, presence=presence, retry_delay_seconds=0)
            if done is None:
                continue
            latencies.append(time.perf_counter() - started)
            progressed = True
            attempts += 1
            first = first or time.time()
            payload = call_originate(call_id=done.call_id, phone_number="4930000000", agent_id=done.agent_id,
                                     queue_id=done.queue_id, callback_id=done.callback_id, attempt=done.attempt)
            request = OriginateRequest.from_envelope(Envelope("call.originate", payload, account=account_id))
            reached = attempts % NOT_REACHED_EVERY != 0
            record_callback_attempt(request, reached=reached)
            call_ended(account_id, str(done.call_id), answered=False, queue_id=done.queue_id, presence=presence)
            last = time.time()
        idle_rounds = 0 if progressed else idle_rounds + 1
    latencies.sort()
    print(json.dumps({"attempts": attempts, "first": first, "last": last,
                      "p50_ms": latencies[len(latencies) // 2] * 1000 if latencies else 0,
                      "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0}), flush=True)


def run(dispatchers: int, account_id: uuid.UUID, agent_ids: list[str], callbacks: int) -> None:
    env = dict(os.environ)
    args_file = os.path.join("/tmp", f"{DB_NAME}-agents.json")
    with open(args_file, "w") as handle:
        json.dump(agent_ids, handle)
    procs = [subprocess.Popen([sys.executable, __file__, "--child", str(n), "--account", str(account_id),
                               "--agents-file", args_file], env=env, stdout=subprocess.PIPE, text=True)
             for n in range(dispatchers)]
    outputs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    # from the first dispatch of any process to the last attempt ended (process start-up excluded)
    elapsed = max(o["last"] for o in outputs) - min(o["first"] for o in outputs if o["first"])
    engine = _owner_engine()
    with engine.connect() as conn:
        doubles = conn.execute(text("""
            SELECT count(*) FROM (
              SELECT body->'payload'->>'callbackId', body->'payload'->>'attempt' FROM event_outbox
              WHERE routing_key = 'call.originate' GROUP BY 1, 2 HAVING count(*) > 1) AS d""")).scalar()
        dialled = conn.execute(text("SELECT count(*) FROM event_outbox WHERE routing_key = 'call.originate'")).scalar()
        statuses = dict(conn.execute(text("SELECT status, count(*) FROM callbacks WHERE account_id = :a GROUP BY 1"),
                                     {"a": account_id}).all())
    engine.dispose()
    finished = statuses.get("completed", 0) + statuses.get("failed", 0)
    print(f"{dispatchers} dispatcher(s), {callbacks:,} callbacks, {len(agent_ids)} agents: {elapsed:.1f} s")
    print(f"  callbacks finished/s {finished / elapsed:,.0f}   attempts dialled/s {dialled / elapsed:,.0f}"
          f"   (attempts {dialled:,}: every {NOT_REACHED_EVERY}th not reached, retried)")
    print(f"  double dispatches {doubles}   lost (unfinished) {callbacks - finished}   statuses {statuses}")
    print(f"  attempts per dispatcher {[o['attempts'] for o in outputs]}   one dispatch (claim + dialing +"
          f" outbox, committed) p50/p99 ms {[(round(o['p50_ms'], 1), round(o['p99_ms'], 1)) for o in outputs]}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--callbacks", type=int, default=10_000)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--child", type=int)
    parser.add_argument("--account")
    parser.add_argument("--agents-file")
    args = parser.parse_args()
    if args.child is not None:
        with open(args.agents_file) as handle:
            child(args.child, args.account, json.load(handle))
        return 0

    from app.accounts.service import create_tenant
    from app.db.engine import reset_engines
    from app.db.migrate import upgrade
    from app.settings import get_settings
    from tests.plugins.services import delete_prefixed_keys

    _maintenance(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    _maintenance(f'CREATE DATABASE "{DB_NAME}"')
    try:
        upgrade(get_settings().database_url)
        sub = f"cbbench-{uuid.uuid4().hex[:6]}"
        account = create_tenant(sub, "admin", PASSWORD, ["queue-mgmt"], bcrypt_rounds=4)
        queue_id, agent_ids = _seed_agents(account.id, sub, args.agents)
        print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores shared: figures are noisy)")
        for dispatchers in (1, 2):
            _reset(account.id, queue_id, agent_ids, args.callbacks)
            run(dispatchers, account.id, agent_ids, args.callbacks)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        reset_engines()
        _maintenance(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        import redis

        delete_prefixed_keys(redis.Redis.from_url(get_settings().redis_url), get_settings().redis_key_prefix)
        with contextlib.suppress(FileNotFoundError):  # no agents file: nothing to clean
            os.remove(os.path.join("/tmp", f"{DB_NAME}-agents.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
