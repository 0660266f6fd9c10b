"""The controller's Redis pool under a burst: more greenlets in a Redis round trip at once
than redis-py's default pool allows (100) all get their answer."""
from __future__ import annotations

import gevent
import redis

from app import limits
from app.redis_pool import shared_redis
from app.settings import get_settings

BURST = 300  # > redis-py's default 100, < CONTROLLER_REDIS_MAX_CONNECTIONS


def _burst(client: redis.Redis, key: str) -> list[BaseException]:
    """BURST greenlets each hold a connection for 0.2 s (BLPOP on an empty list)."""
    jobs = [gevent.spawn(client.blpop, [key], 0.2) for _ in range(BURST)]
    gevent.joinall(jobs, timeout=30)
    return [job.exception for job in jobs if job.exception is not None]


def test_given_a_burst_past_the_default_pool_size_then_every_greenlet_is_served(redis_prefix):
    assert BURST < limits.CONTROLLER_REDIS_MAX_CONNECTIONS
    assert _burst(shared_redis(get_settings().redis_url), f"{redis_prefix}pool-burst") == []


def test_given_the_default_pool_the_same_burst_fails_so_the_test_above_can_fail(redis_prefix):
    errors = _burst(redis.Redis.from_url(get_settings().redis_url), f"{redis_prefix}pool-burst")
    assert errors and all(isinstance(e, redis.ConnectionError) for e in errors)
