"""CSV export of call records: time and memory. Figures, not pass/fail.

Against a throw-away PostgreSQL database (migrated with the real chain), two tenants are seeded
with 1,000 and 10,000 call records, each with an interaction summary, an agent and a queue.
Each export goes through the real endpoint (Flask app, JWT, RLS role, server-side cursor,
compliance log) with a streaming client that discards chunks as they arrive, like a browser
writing to disk.

Printed:
- wall time of a 10,000-row export (best and median of several runs; goal < 1 s);
- Python heap peak (tracemalloc) while streaming 1,000 rows vs 10,000 rows — flat if streaming
  works — and, for contrast, the peak when the same 10,000 rows are materialised in one list
  (what a non-streaming export would hold);
- process max RSS after all runs.

Run: .venv/bin/python benchmarks/export_bench.py [--runs N]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
import tracemalloc
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

DB_NAME = f"sbc_bench_export_{os.getpid()}"
os.environ["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/{DB_NAME}"
os.environ.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)

from app.gevent_setup import patch  # noqa: E402

patch()

import psycopg2  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402

PASSWORD = "bench-password-123"


def _maintenance(sql: str) -> None:
    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def _seed(owner_url: str, account_id: uuid.UUID, count: int) -> None:
    from app.db.urls import sqlalchemy_url

    engine = create_engine(sqlalchemy_url(owner_url))
    with engine.begin() as conn:
        user_id = uuid.uuid4()
        conn.execute(text("INSERT INTO users (id, account_id, username, password_hash, role) "
                          "VALUES (:u, :a, 'agent.smith', 'x', 'agent')"), {"u": user_id, "a": account_id})
        agent_id = conn.execute(text("INSERT INTO agents (account_id, user_id) VALUES (:a, :u) RETURNING id"),
                                {"a": account_id, "u": user_id}).scalar()
        queue_id = conn.execute(text("INSERT INTO queues (account_id, name) VALUES (:a, 'sales') RETURNING id"),
                                {"a": account_id}).scalar()
        conn.execute(text("""
            INSERT INTO call_records (account_id, trace_id, call_id, direction, from_number, to_number,
                                      started_at, status, talk_ms, duration_ms, agent_id, queue_id, journey,
                                      sentiment_label, has_recording, recording_url)
            SELECT :a, gen_random_uuid(), gen_random_uuid(), 'inbound', '1555' || lpad(g::text, 7, '0'),
                   '18005550100', now() - make_interval(secs => g), 'completed', 61000, 65000, :agent, :queue,
                   'ivr > queue:sales > agent:agent.smith', 'positive', true,
                   'https://recordings.example/' || g || '.mp3'
            FROM generate_series(1, :n) AS g
        """), {"a": account_id, "n": count, "agent": agent_id, "queue": queue_id})
        conn.execute(text("""
            INSERT INTO interaction_summary (account_id, trace_id, queue_wait_ms, talk_ms, hold_count, hold_ms,
                                             aht_ms, abandoned, disposition)
            SELECT account_id, trace_id, 12000, 60000, 1, 5000, 90000, false, 'resolved'
            FROM call_records WHERE account_id = :a
        """), {"a": account_id})
    engine.dispose()


def _stream(client, host: str, token: str) -> tuple[int, int]:
    """Consume the export chunk by chunk; returns (bytes, data rows)."""
    response = client.get("/api/call-records/export", base_url=f"http://{host}",
                          headers={"Authorization": f"Bearer {token}"}, buffered=False)
    assert response.status_code == 200, response.status_code
    size = lines = 0
    for chunk in response.response:
        size += len(chunk)
        lines += chunk.count(b"\r\n" if isinstance(chunk, bytes) else "\r\n")
    response.close()
    return size, lines - 1


def _materialised(account_id: uuid.UUID) -> int:
    """The non-streaming alternative: all rows in one list (for the memory contrast only)."""
    from app import limits
    from app.db.engine import tenant_session
    from app.exports.call_records import export_statement, to_csv_row
    from app.exports.filters import CallRecordFilters

    with tenant_session(account_id) as db:
        rows = [to_csv_row(r) for r in db.execute(
            export_statement(account_id, CallRecordFilters(), limits.CSV_EXPORT_MAX_ROWS))]
    return len(rows)


def _peak(fn) -> tuple[float, object]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1024 / 1024, result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from app.accounts.service import create_tenant
    from app.api.app import create_app
    from app.db.engine import reset_engines
    from app.db.migrate import upgrade
    from app.settings import get_settings

    owner_url = get_settings().database_url
    _maintenance(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    _maintenance(f'CREATE DATABASE "{DB_NAME}"')
    try:
        upgrade(owner_url)
        tenants = {}
        for count in (1_000, 10_000):
            sub = f"bench{count}-{uuid.uuid4().hex[:6]}"
            account = create_tenant(sub, "admin", PASSWORD, ["api-access"], bcrypt_rounds=4)
            _seed(owner_url, account.id, count)
            tenants[count] = (account.id, f"{sub}.{get_settings().base_domain}")

        app = create_app({"TESTING": True})
        client = app.test_client()
        tokens = {}
        for count, (_, host) in tenants.items():
            login = client.post("/auth/login", base_url=f"http://{host}",
                                json={"username": "admin", "password": PASSWORD})
            tokens[count] = login.get_json()["token"]

        _stream(client, tenants[10_000][1], tokens[10_000])  # warm-up (pools, imports, plans)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            size, rows = _stream(client, tenants[10_000][1], tokens[10_000])
            times.append(time.perf_counter() - started)
        print(f"export 10,000 rows: {size / 1024 / 1024:.2f} MiB CSV, {rows} rows")
        print(f"  wall time  best {min(times) * 1000:.0f} ms   median {statistics.median(times) * 1000:.0f} ms"
              f"   ({args.runs} runs; goal < 1000 ms)")
        print(f"  throughput {rows / statistics.median(times):,.0f} rows/s")

        peak_1k, (_, rows_1k) = _peak(lambda: _stream(client, tenants[1_000][1], tokens[1_000]))
        peak_10k, (_, rows_10k) = _peak(lambda: _stream(client, tenants[10_000][1], tokens[10_000]))
        peak_list, listed = _peak(lambda: _materialised(tenants[10_000][0]))
        print("python heap peak while exporting (tracemalloc):")
        print(f"  streamed  {rows_1k:>6} rows: {peak_1k:6.2f} MiB")
        print(f"  streamed  {rows_10k:>6} rows: {peak_10k:6.2f} MiB   (x{peak_10k / peak_1k:.2f} for x10 rows)")
        print(f"  in a list {listed:>6} rows: {peak_list:6.2f} MiB   (non-streaming contrast)")
        print(f"process max RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    finally:
        reset_engines()
        _maintenance(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    sys.exit(main())
