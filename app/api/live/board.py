"""What the wallboard shows for one account, read fresh: per queue the figures of
``queue.metrics`` (waiting callers, longest wait, member agents by state, service level;
app/contact/queue_metrics.py computes both from the same Redis line and database), and the
account's calls in progress: their count from the concurrency limiter's live slots
(app/calls/limiter.py), and the calls themselves from the live-call registry
(app/calls/live_calls.py), so a page opened mid-call lists the calls already running.

Read fresh rather than folded from events: a page that opens, or an event that changes a line
or an agent, gets the figures the controllers themselves use, and a missed or duplicated event
cannot leave the board wrong.
"""
from __future__ import annotations

import time
from typing import Any

import redis

from app.calls import live_calls
from app.calls.limiter import ConcurrencyLimiter
from app.contact.presence import Presence
from app.contact.queue_metrics import load_queues, queue_metrics
from app.contact.queue_stats import QueueStats


class Board:
    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.presence = Presence(client, prefix)
        self.stats = QueueStats(client, prefix)
        self.limiter = ConcurrencyLimiter(client, key_prefix=prefix)
        self.client, self.prefix = client, prefix

    def snapshot(self, account_id: str) -> dict[str, Any]:
        now_ms = int(time.time() * 1000)
        queues = [queue_metrics(row, self.presence, self.stats, now_ms=now_ms, idle_too=True)
                  for row in load_queues(account_id)]
        calls, _ = self.limiter.counts(account_id)
        listed = live_calls.in_progress(self.client, self.prefix, account_id)
        return {"queues": queues, "callsInProgress": calls, "calls": listed, "at": now_ms}
