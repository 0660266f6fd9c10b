"""``queue.metrics``: one event per queue every QUEUE_METRICS_PERIOD_SECONDS, from the
controllers (they hold the Redis line and the database), emitted once per period whatever the
number of controllers: each wakes at the period's start and only the one that takes the
period's Redis lock (``SET NX``, key ``cc:metrics:<period start>``) emits. A controller that
dies mid-period loses that period's figures only.

Per queue that has members or waiting callers (docs/events.md "queue.metrics"): waiting
callers and the longest wait (Redis line), member agents by state (database) and on a call or
offer (Redis engaged marks), and the service level: the share of the callers answered within
the window (QUEUE_SERVICE_LEVEL_WINDOW_SECONDS) who waited at most the queue's
``service_level_seconds`` (app/contact/queue_stats.py).
"""
from __future__ import annotations

import logging
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

import gevent
from sqlalchemy import select

from app import limits
from app.contact.presence import PRIORITY_WEIGHT, Presence
from app.contact.queue_stats import QueueStats
from app.models.enums import AGENT_STATES

if TYPE_CHECKING:  # pragma: no cover
    import redis

log = logging.getLogger(__name__)

METRICS_KEY = "queue.metrics"


@dataclass
class QueueRow:
    account_id: str
    queue_id: str
    name: str
    strategy: str
    service_level_seconds: int
    agents: dict[str, int] = field(default_factory=dict)  # state -> members
    members: list[str] = field(default_factory=list)      # agent ids


def load_queues(account_id: Optional[str] = None) -> list[QueueRow]:
    """Every queue with its members' states: across tenants (the controller's platform path),
    or one account's under its row-level security (the console's live view, in the API)."""
    from app.db import platform_session, tenant_session
    from app.models import Agent, AgentQueue, Queue

    with (platform_session() if account_id is None else tenant_session(account_id)) as db:
        queues = db.execute(select(Queue.account_id, Queue.id, Queue.name, Queue.strategy,
                                   Queue.service_level_seconds).order_by(Queue.name)).all()
        members = db.execute(
            select(AgentQueue.queue_id, Agent.id, Agent.state)
            .join(Agent, (Agent.id == AgentQueue.agent_id) & (Agent.account_id == AgentQueue.account_id))
        ).all()
    by_queue: dict[Any, list[tuple[str, str]]] = defaultdict(list)
    for queue_id, agent_id, state in members:
        by_queue[queue_id].append((str(agent_id), state))
    rows = []
    for account_id, queue_id, name, strategy, service_level in queues:
        states = {s: 0 for s in AGENT_STATES}
        for _, state in by_queue.get(queue_id, ()):
            states[state] = states.get(state, 0) + 1
        rows.append(QueueRow(str(account_id), str(queue_id), name, strategy, service_level, states,
                             [a for a, _ in by_queue.get(queue_id, ())]))
    return rows


def queue_metrics(row: QueueRow, presence: Presence, stats: QueueStats, *,
                  now_ms: Optional[int] = None, idle_too: bool = False) -> Optional[dict[str, Any]]:
    """The payload for one queue; None when it has neither members nor waiting callers
    (``idle_too``: the payload anyway, for a wallboard that lists every queue)."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    scores = presence.redis.zrange(presence.waiting_key(row.account_id, row.name), 0, -1, withscores=True)
    if not row.members and not scores and not idle_too:
        return None
    # score = -priority·W + enqueue ms with enqueue ms < W: the enqueue time is the score mod W
    enqueued = [int(score) % PRIORITY_WEIGHT for _, score in scores]
    longest = max(0, now_ms - min(enqueued)) // 1000 if enqueued else 0
    pipe = presence.redis.pipeline()
    for agent_id in row.members:
        pipe.exists(presence.engaged_prefix(row.account_id) + agent_id)
    engaged = sum(1 for e in pipe.execute() if e) if row.members else 0
    level = stats.service_level(row.account_id, row.name, row.service_level_seconds, now_ms)
    return {
        "accountSid": row.account_id, "queueId": row.queue_id, "queue": row.name, "strategy": row.strategy,
        "waiting": len(scores), "longestWaitSeconds": longest,
        "agents": dict(row.agents), "agentsEngaged": engaged,
        "serviceLevel": {"targetSeconds": row.service_level_seconds,
                         "windowSeconds": limits.QUEUE_SERVICE_LEVEL_WINDOW_SECONDS,
                         "answered": level.answered, "withinTarget": level.within_target,
                         "percent": level.percent},
        "periodSeconds": limits.QUEUE_METRICS_PERIOD_SECONDS,
    }


class QueueMetricsEmitter:
    """Emits ``queue.metrics`` for every queue once per period across all controllers."""

    def __init__(self, client: "redis.Redis", prefix: str, *,
                 emit: Callable[..., Any],
                 loader: Callable[[], Iterable[QueueRow]] = load_queues,
                 period_seconds: float = limits.QUEUE_METRICS_PERIOD_SECONDS) -> None:
        self.presence = Presence(client, prefix)
        self.stats = QueueStats(client, prefix)
        self.emit = emit
        self.loader = loader
        self.period = period_seconds
        self.prefix = prefix

    def lock_key(self, period_start: int) -> str:
        return f"{self.prefix}cc:metrics:{period_start}"

    def run_once(self, now: Optional[float] = None) -> int:
        """Emit this period's metrics if no other controller did; returns how many."""
        now = now if now is not None else time.time()
        period_start = int(now // self.period * self.period)
        if not self.presence.redis.set(self.lock_key(period_start), "1", nx=True,
                                       ex=max(1, int(self.period * 2))):
            return 0
        count = 0
        for row in self.loader():
            payload = queue_metrics(row, self.presence, self.stats, now_ms=int(now * 1000))
            if payload is not None:
                self.emit(METRICS_KEY, payload, account_id=uuid.UUID(row.account_id))
                count += 1
        return count

    def _loop(self) -> None:
        while True:
            now = time.time()
            gevent.sleep(self.period - now % self.period + 0.05)  # just after the period starts
            try:
                self.run_once()
            except Exception:  # Redis or the database away: the next period tries again
                log.warning("queue.metrics: period skipped", exc_info=True)

    def start(self) -> "gevent.Greenlet":
        return gevent.spawn(self._loop)


