"""Service discovery on the bus: system.service.up at start, .heartbeat every interval,
.down at a clean stop.

Why a heartbeat on top of up/down: a killed process never says ``down``. Consumers treat an
instance as gone when no heartbeat arrived for 3 intervals (docs/events.md). Heartbeats go
through the outbox like every event (at-least-once, ordered per process); a heartbeat relayed
late after a broker outage carries its original ``occurred_at``, so consumers judge freshness
by that, not by arrival time.
"""
from __future__ import annotations

import logging
import os
import socket
import uuid
from datetime import datetime, timezone
from typing import Any, Callable

import gevent

from app import limits
from app.events import payloads
from app.events.exchanges import SYSTEM_EVENTS
from app.events.outbox import publish

log = logging.getLogger(__name__)

VERSION = "0.1.0"


class ServiceHeartbeat:
    def __init__(self, service: str, *,
                 interval_seconds: float | Callable[[], float] = limits.SERVICE_HEARTBEAT_SECONDS,
                 details: Callable[[], dict[str, Any]] | None = None,
                 sleep: Callable[[float], None] = gevent.sleep) -> None:
        """``details`` is called for each beat (e.g. live call count of a controller);
        ``interval_seconds`` may be a callable read before each beat (heartbeat.interval_seconds
        changes without a restart); ``sleep`` is injectable so a test sees each wait asked for."""
        self.service = service
        self.instance_id = f"{service}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.interval = interval_seconds
        self.details = details
        self.started_at = datetime.now(timezone.utc)
        self._sleep = sleep
        self._greenlet: gevent.Greenlet | None = None
        self.sent: list[uuid.UUID] = []

    def _payload(self) -> dict[str, Any]:
        details = {}
        if self.details is not None:
            try:
                details = self.details()
            except Exception:
                log.exception("heartbeat details failed")
        return payloads.service_state(self.service, self.instance_id, host=socket.gethostname(),
                                      pid=os.getpid(), version=VERSION, started_at=self.started_at,
                                      details=details)

    def _send(self, key: str) -> None:
        try:
            self.sent.append(publish(SYSTEM_EVENTS, key, self._payload()))
        except Exception:  # the database may be down too; a missed beat is not fatal
            log.exception("could not queue %s", key)

    def start(self) -> "ServiceHeartbeat":
        self._send("system.service.up")
        self._greenlet = gevent.spawn(self._loop)
        return self

    def _loop(self) -> None:
        while True:
            self._sleep(self.interval() if callable(self.interval) else self.interval)
            self._send("system.service.heartbeat")

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill()
            self._greenlet = None
        self._send("system.service.down")
