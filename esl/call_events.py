"""The bus events of one call, written to the outbox in order by one greenlet.

Why a queue: each event is a PostgreSQL insert + commit (the outbox), a few milliseconds; the
caller must not wait for them before hearing anything. One greenlet per call keeps the
events in the order they happened, and the session drains it before writing the call record,
so ``call.ended`` (written with the record) always comes last.
"""
from __future__ import annotations

import logging
import uuid
from typing import Any, Optional

import gevent
import gevent.queue

from app.events import payloads

log = logging.getLogger(__name__)

_DONE = object()


class CallEvents:
    def __init__(self, trace_id: uuid.UUID, account_id: Optional[uuid.UUID] = None) -> None:
        self.trace_id = trace_id
        self.account_id = account_id
        self._queue: gevent.queue.Queue = gevent.queue.Queue()
        self._writer = gevent.spawn(self._drain)

    def emit(self, routing_key: str, payload: dict[str, Any]) -> None:
        self._queue.put((routing_key, payload, self.account_id))

    def close(self, timeout: float = 10.0) -> None:
        """Wait until every queued event is in the outbox."""
        self._queue.put(_DONE)
        self._writer.join(timeout)
        if not self._writer.dead:
            log.error("call %s: events still queued after %.0fs", self.trace_id, timeout)
            self._writer.kill()

    def _drain(self) -> None:
        for item in self._queue:
            if item is _DONE:
                return
            key, payload, account_id = item
            try:
                payloads.emit(key, payload, account_id=account_id, trace_id=self.trace_id)
            except Exception:  # the outbox is PostgreSQL: a failed insert must not drop the call
                log.exception("call %s: could not queue %s", self.trace_id, key)
