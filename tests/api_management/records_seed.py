"""Fast call-record seeding for the list/detail/export tests (one SQL statement per batch)."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

BASE_TIME = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def insert_records(engine: Engine, account_id: uuid.UUID, count: int, *, direction: str = "inbound",
                   status: str = "completed", start: datetime = BASE_TIME, step_seconds: int = 60,
                   with_summary: bool = False, **columns: Any) -> None:
    """``count`` records one ``step_seconds`` apart going back from ``start``; optional summaries.
    ``columns`` are fixed values for other call_records columns (agent_id, queue_id, journey...)."""
    extra_names = "".join(f", {name}" for name in columns)
    extra_values = "".join(f", :{name}" for name in columns)
    params = {"account": str(account_id), "count": count, "direction": direction, "status": status,
              "start": start, "step": step_seconds, **{k: v for k, v in columns.items()}}
    with engine.begin() as conn:
        conn.execute(text(f"""
            INSERT INTO call_records (account_id, trace_id, call_id, direction, from_number, to_number,
                                      started_at, status, talk_ms, duration_ms {extra_names})
            SELECT :account, gen_random_uuid(), gen_random_uuid(), :direction,
                   '1555' || lpad(g::text, 7, '0'), '1800555000' || (g % 10),
                   :start - make_interval(secs => g * :step), :status, 61000, 65000 {extra_values}
            FROM generate_series(0, :count - 1) AS g
        """), params)
        if with_summary:
            conn.execute(text("""
                INSERT INTO interaction_summary (account_id, trace_id, queue_wait_ms, talk_ms, hold_count,
                                                 hold_ms, aht_ms, abandoned, disposition)
                SELECT account_id, trace_id, 12400, 59600, 2, 7000, 95000, false, 'resolved'
                FROM call_records r WHERE account_id = :account
                  AND NOT EXISTS (SELECT 1 FROM interaction_summary s WHERE s.trace_id = r.trace_id)
            """), {"account": str(account_id)})
