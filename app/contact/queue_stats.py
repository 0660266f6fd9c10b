"""Rolling figures of a queue in Redis: recent handle times (for the estimated wait a caller
hears) and recent answers with their wait (for the service level of ``queue.metrics``).

Keys (under ``settings.redis_key_prefix``):

- ``cc:<account>:q:<queue name>:handle`` — sorted set ``<call id>:<agent leg>:<handle ms>`` → end
  ms: the last QUEUE_EWT_SAMPLES handle times (an agent leg's answer, or the hand-over of the
  caller to it, to its end or the hand-over to the next) within QUEUE_EWT_WINDOW_SECONDS.
- ``cc:<account>:q:<queue name>:answered`` — sorted set ``<call id>:<wait ms>`` → answer ms:
  the callers answered within QUEUE_SERVICE_LEVEL_WINDOW_SECONDS.

EWT = ceil(position × mean handle time ÷ agents serving the queue), where agents serving are
the members with a live SIP registration (whatever their state: a busy agent frees up too).
No handle time in the window → no estimate (the announcement says only the position).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from app import limits

if TYPE_CHECKING:  # pragma: no cover
    import redis


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class ServiceLevel:
    answered: int
    within_target: int

    @property
    def percent(self) -> Optional[float]:
        """None when no caller was answered in the window (no service level to speak of)."""
        return None if self.answered == 0 else round(100.0 * self.within_target / self.answered, 1)


class QueueStats:
    def __init__(self, client: "redis.Redis", prefix: str) -> None:
        self.redis = client
        self.prefix = prefix

    def handle_key(self, account_id: str, queue: str) -> str:
        return f"{self.prefix}cc:{account_id}:q:{queue}:handle"

    def answered_key(self, account_id: str, queue: str) -> str:
        return f"{self.prefix}cc:{account_id}:q:{queue}:answered"

    # -- writers (the queue verb) --------------------------------------------------------------
    def handled(self, account_id: str, queue: str, call_id: str, handle_ms: int,
                at_ms: Optional[int] = None, leg: Optional[str] = None) -> None:
        """An agent's call of this queue ended after ``handle_ms`` talking. ``leg``: the agent
        leg it measures (a transferred call has one sample per agent leg:
        app/contact/handle_samples.py), so two legs' equal figures stay two samples."""
        at = at_ms if at_ms is not None else _now_ms()
        key = self.handle_key(account_id, queue)
        pipe = self.redis.pipeline()
        member = f"{call_id}:{leg}" if leg else call_id
        pipe.zadd(key, {f"{member}:{max(0, int(handle_ms))}": at})
        pipe.zremrangebyscore(key, "-inf", at - limits.QUEUE_EWT_WINDOW_SECONDS * 1000)
        pipe.zremrangebyrank(key, 0, -limits.QUEUE_EWT_SAMPLES - 1)
        pipe.expire(key, limits.QUEUE_EWT_WINDOW_SECONDS)
        pipe.execute()

    def answered(self, account_id: str, queue: str, call_id: str, waited_ms: int,
                 at_ms: Optional[int] = None) -> None:
        """An agent answered this queue's caller after ``waited_ms`` in line."""
        at = at_ms if at_ms is not None else _now_ms()
        key = self.answered_key(account_id, queue)
        pipe = self.redis.pipeline()
        pipe.zadd(key, {f"{call_id}:{max(0, int(waited_ms))}": at})
        pipe.zremrangebyscore(key, "-inf", at - limits.QUEUE_SERVICE_LEVEL_WINDOW_SECONDS * 1000)
        pipe.expire(key, limits.QUEUE_SERVICE_LEVEL_WINDOW_SECONDS)
        pipe.execute()

    # -- readers ---------------------------------------------------------------------------------
    @staticmethod
    def _values(members: Sequence[bytes | str]) -> list[int]:
        out = []
        for member in members:
            text = member.decode() if isinstance(member, bytes) else member
            out.append(int(text.rsplit(":", 1)[1]))
        return out

    def mean_handle_ms(self, account_id: str, queue: str, now_ms: Optional[int] = None) -> Optional[float]:
        since = (now_ms if now_ms is not None else _now_ms()) - limits.QUEUE_EWT_WINDOW_SECONDS * 1000
        values = self._values(self.redis.zrangebyscore(self.handle_key(account_id, queue), since, "+inf"))
        return sum(values) / len(values) if values else None

    def estimated_wait_seconds(self, account_id: str, queue: str, position: int, serving: int,
                               now_ms: Optional[int] = None) -> Optional[int]:
        """EWT of the caller at ``position`` with ``serving`` agents, None without data."""
        mean = self.mean_handle_ms(account_id, queue, now_ms)
        if mean is None or position < 1:
            return None
        return math.ceil(position * mean / 1000 / max(1, serving))

    def service_level(self, account_id: str, queue: str, target_seconds: int,
                      now_ms: Optional[int] = None) -> ServiceLevel:
        since = (now_ms if now_ms is not None else _now_ms()) - limits.QUEUE_SERVICE_LEVEL_WINDOW_SECONDS * 1000
        waits = self._values(self.redis.zrangebyscore(self.answered_key(account_id, queue), since, "+inf"))
        return ServiceLevel(len(waits), sum(1 for w in waits if w <= target_seconds * 1000))


def wait_text(seconds: int) -> str:
    """The spoken estimate: whole minutes, rounded up ("about 1 minute" under a minute)."""
    minutes = max(1, math.ceil(seconds / 60))
    return f"Your estimated wait is about {minutes} minute{'s' if minutes != 1 else ''}"
