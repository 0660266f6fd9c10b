"""Caller positions in a queue: one Redis list per (account, queue), oldest caller first.

Redis holds only what may be rebuilt (DESIGN "Data"): a controller that dies leaves stale
entries, so each entry also gets the list's TTL refreshed on every join; the list vanishes
once nobody has joined for a day.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # pragma: no cover
    import redis

_TTL_SECONDS = 24 * 3600


class QueuePositions:
    def __init__(self, client: "redis.Redis", prefix: str, account_id: str, queue: str) -> None:
        self._redis = client
        self.key = f"{prefix}queue:{account_id}:{queue}:waiting"

    def join(self, call_id: str) -> int:
        pipe = self._redis.pipeline()
        pipe.rpush(self.key, call_id)
        pipe.expire(self.key, _TTL_SECONDS)
        length, _ = pipe.execute()
        return int(length)

    def position(self, call_id: str) -> Optional[int]:
        """1-based position, None when the call is not waiting (removed elsewhere)."""
        index = self._redis.lpos(self.key, call_id)
        return None if index is None else int(index) + 1

    def leave(self, call_id: str) -> None:
        self._redis.lrem(self.key, 0, call_id)

    def waiting(self) -> int:
        return int(self._redis.llen(self.key))
