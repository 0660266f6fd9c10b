"""The controller's Redis client: one pool shared by every call's greenlet.

redis-py 8's default pool raises "Too many connections" once 100 are in use. Every greenlet in
a Redis round trip holds one, so a burst of call setups plus waiting queue callers would fail
calls there. A blocking pool makes the 513th greenlet wait for a free connection instead (at
most ``CONTROLLER_REDIS_POOL_WAIT_SECONDS``)."""
from __future__ import annotations

import redis

from app import limits


def shared_redis(url: str) -> redis.Redis:
    """A client whose pool waits for a free connection instead of failing past the maximum."""
    return redis.Redis(connection_pool=redis.BlockingConnectionPool.from_url(
        url, max_connections=limits.CONTROLLER_REDIS_MAX_CONNECTIONS,
        timeout=limits.CONTROLLER_REDIS_POOL_WAIT_SECONDS))


def as_text(value: bytes | str) -> str:
    """A Redis reply member as text: our clients return bytes (no ``decode_responses``), but
    redis-py types every reply as bytes or str, so readers say which one they got."""
    return value.decode() if isinstance(value, bytes) else value
