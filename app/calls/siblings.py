"""Sibling controller processes on one outbound socket port share which calls they drive.

Why: ``sbc controller --processes N`` runs N controllers that all bind the same ``host:port``
(SO_REUSEPORT; the kernel spreads FreeSWITCH's sockets over them), so every channel in the
``socket`` application names the same target. Lost-call recovery and the orphan sweeper take a
channel aimed at their own target with no session *in this process* for a lost or orphan one
and hang it up — a sibling's call included. So each process publishes the calls it has a socket
for (in setup, live, finishing, record held) as one Redis set per process, rewritten every
``CONTROLLER_SIBLING_PUBLISH_SECONDS`` with a TTL: a process that dies stops refreshing it and
its calls become recoverable once the key expires (or at once when its restart overwrites it).
Lost-call recovery waits two publish periods between listing candidates and checking them, so a
call a sibling took after its last publish is either in the next set or already recorded.
With one process (the default) nothing is published and nothing changes.
"""
from __future__ import annotations

import logging
from typing import Callable, Collection

import gevent
import redis

from app import limits
from esl.greenlet_task import GreenletTask

log = logging.getLogger(__name__)


class SiblingSessions(GreenletTask):
    """Publishes this process's calls; ``others()`` is the union of its siblings' sets."""

    def __init__(self, client: redis.Redis, key_prefix: str, socket_target: str, index: int,
                 processes: int, sessions: Callable[[], Collection[str]], *,
                 interval: float = limits.CONTROLLER_SIBLING_PUBLISH_SECONDS,
                 ttl: float = limits.CONTROLLER_SIBLING_TTL_SECONDS) -> None:
        self.redis = client
        self.base = f"{key_prefix}controller:sessions:{socket_target}:"
        self.index = index
        self.processes = processes
        self.sessions = sessions
        self.interval = interval
        self.ttl_ms = int(ttl * 1000)

    def key(self, index: int) -> str:
        return f"{self.base}{index}"

    def publish(self) -> None:
        """Replace this process's set in one transaction (an empty set deletes the key)."""
        calls = [str(c) for c in self.sessions() if c]
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(self.key(self.index))
        if calls:
            pipe.sadd(self.key(self.index), *calls)
            pipe.pexpire(self.key(self.index), self.ttl_ms)
        pipe.execute()

    def others(self) -> set[str]:
        """Calls the sibling processes drive, as last published."""
        keys = [self.key(i) for i in range(self.processes) if i != self.index]
        if not keys:
            return set()
        return {m.decode() if isinstance(m, bytes) else m for m in self.redis.sunion(keys)}

    def settle(self) -> None:
        """Wait until every live sibling has published at least once more."""
        gevent.sleep(2 * self.interval)

    def _run(self) -> None:
        while True:
            try:
                self.publish()
            except redis.RedisError as exc:  # the TTL covers a blip; recovery/sweeps then fail
                log.warning("publishing this controller's calls for its siblings failed: %s", exc)
            gevent.sleep(self.interval)
