"""Liveness and readiness of a process, as JSON with one entry per check.

- ``/healthz``: the process answers (its event loop runs). No dependency is touched, so an
  orchestrator does not restart a healthy process because PostgreSQL is away.
- ``/readyz``: every dependency the process needs answers now: PostgreSQL (a fresh connection
  and ``SELECT 1``), Redis (``PING``), RabbitMQ (an AMQP handshake); the controller adds
  ``freeswitch``: at least one switch connected with every module of modules.conf.xml.
  Checks run concurrently, each bounded by ``limits.READINESS_CHECK_TIMEOUT_SECONDS``, so a
  dependency that hangs (not only one that refuses) makes the answer ``not_ready`` in time.

Fresh connections on purpose: a pooled connection can look fine while the server is gone, and
the question is "could this process do its work now".
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

import gevent
import pika
import redis
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from app import limits
from app.db.engine import sqlalchemy_url

# A check returns optional details, or raises: the exception text becomes the check's error.
Check = Callable[[], Optional[dict[str, Any]]]

OK, FAIL = "ok", "fail"


class CheckFailed(Exception):
    """A check that ran and found the dependency unusable (details say why)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details


def postgresql_check(url: str) -> Check:
    engine = create_engine(sqlalchemy_url(url), poolclass=NullPool, hide_parameters=True,
                           connect_args={"connect_timeout": max(2, int(limits.READINESS_CHECK_TIMEOUT_SECONDS))})

    def check() -> None:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    return check


def redis_check(url: str) -> Check:
    timeout = limits.READINESS_CHECK_TIMEOUT_SECONDS
    client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)

    def check() -> None:
        client.ping()
    return check


def rabbitmq_check(url: str) -> Check:
    def check() -> None:
        params = pika.URLParameters(url)
        params.connection_attempts = 1
        params.socket_timeout = limits.READINESS_CHECK_TIMEOUT_SECONDS
        params.stack_timeout = limits.READINESS_CHECK_TIMEOUT_SECONDS
        params.blocked_connection_timeout = limits.READINESS_CHECK_TIMEOUT_SECONDS
        connection = pika.BlockingConnection(params)
        connection.close()
    return check


def freeswitch_check(nodes: Callable[[], Iterable[Any]], missing: Callable[[], dict[str, list[str]]]) -> Check:
    """Ready when at least one switch is connected and lacks none of our modules."""
    def check() -> dict[str, Any]:
        missing_by_node = missing()
        details = {}
        usable = 0
        for node in nodes():
            where = f"{node.host}:{node.port}"
            lacking = missing_by_node.get(where)
            details[where] = {"connected": node.connected, "missingModules": lacking}
            if node.connected and lacking == []:
                usable += 1
        if not usable:
            raise CheckFailed("no FreeSWITCH connected with all its modules", details)
        return details
    return check


def routing_check(listener: Callable[[], Any]) -> Check:
    """Ready once the routing listener's queue is bound and it has caught up: before that, a
    routing change committed now would reach no one here. ``applied`` counts the routing
    configurations this process applied (catch-ups included): once ready, each later
    ``routing.config.changed`` adds exactly one, which is how a caller waits for its writes."""
    def check() -> dict[str, Any]:
        current = listener()
        if current is None or not current.ready.is_set():
            raise CheckFailed("routing change listener not bound to the broker (or not caught up) yet")
        return {"catchUps": current.catch_ups, "applied": current.reloader.applied}
    return check


def dependency_checks(settings, *, database_url: str | None = None) -> dict[str, Check]:
    """PostgreSQL (as the role the process works with: the platform role by default, the API
    passes its tenant-scoped role), Redis and RabbitMQ."""
    return {"postgresql": postgresql_check(database_url or settings.platform_database_url),
            "redis": redis_check(settings.redis_url),
            "rabbitmq": rabbitmq_check(settings.amqp_url)}


@dataclass
class Readiness:
    process: str
    checks: dict[str, Check]
    # injectable so a test can tell this bound from a driver's own timeouts (also ~2 s)
    timeout_seconds: float = limits.READINESS_CHECK_TIMEOUT_SECONDS

    def __post_init__(self) -> None:
        self.started = time.monotonic()

    def liveness(self) -> dict[str, Any]:
        return {"status": "alive", "process": self.process, "pid": os.getpid(),
                "uptimeSeconds": round(time.monotonic() - self.started, 1)}

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        jobs = {name: gevent.spawn(_run, check, self.timeout_seconds)
                for name, check in self.checks.items()}
        gevent.joinall(list(jobs.values()))
        results = {name: job.value for name, job in jobs.items()}
        ready = all(r["status"] == OK for r in results.values())
        return ready, {"status": "ready" if ready else "not_ready", "process": self.process,
                       "pid": os.getpid(), "checks": results}


def _run(check: Check, timeout_seconds: float) -> dict[str, Any]:
    started = time.perf_counter()
    result: dict[str, Any] = {"status": OK}
    try:
        with gevent.Timeout(timeout_seconds, CheckFailed(f"no answer within {timeout_seconds:g} s")):
            details = check()
        if details:
            result["details"] = details
    except Exception as exc:
        result = {"status": FAIL, "error": _describe(exc)}
        if isinstance(exc, CheckFailed) and exc.details:
            result["details"] = exc.details
    result["latencyMs"] = round((time.perf_counter() - started) * 1000, 1)
    return result


def _describe(exc: BaseException) -> str:
    text_ = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text_}"[:300] if text_ else type(exc).__name__
