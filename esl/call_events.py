"""Bus events of the calls on this controller, written to the outbox off the call path.

Why: each event is an outbox row, and one commit per event (a disk flush) caps a controller at
a few hundred events a second — below a few hundred calls a second with several events each.
One writer greenlet drains a single FIFO and writes whatever has queued up in one transaction,
so commits are shared across calls while each call's events keep their order. The session
waits on a flush marker before writing its call record, so ``call.ended`` always comes last.
"""
from __future__ import annotations

import logging
import uuid
from typing import Any, Optional

import gevent
import gevent.event
import gevent.queue

from app.db.engine import platform_session
from app.events import outbox
from app.events.exchanges import exchange_for

log = logging.getLogger(__name__)

BATCH_MAX_EVENTS = 500
FLUSH_TIMEOUT_SECONDS = 10.0

_Event = tuple[str, dict[str, Any], Optional[uuid.UUID], Optional[uuid.UUID]]


class EventWriter:
    def __init__(self) -> None:
        self._queue: gevent.queue.Queue = gevent.queue.Queue()
        self._greenlet = gevent.spawn(self._run)
        self.batches = 0

    def emit(self, routing_key: str, payload: dict[str, Any], *, account_id: Optional[uuid.UUID],
             trace_id: Optional[uuid.UUID]) -> None:
        self._queue.put((routing_key, payload, account_id, trace_id))

    def flush(self, timeout: float = FLUSH_TIMEOUT_SECONDS) -> bool:
        """Block until everything queued before this call is in the outbox."""
        marker = gevent.event.Event()
        self._queue.put(marker)
        return marker.wait(timeout)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < BATCH_MAX_EVENTS and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            events = [item for item in batch if isinstance(item, tuple)]
            if events:
                self._write(events)
            for item in batch:
                if isinstance(item, gevent.event.Event):
                    item.set()

    def _write(self, events: list[_Event]) -> None:
        rows = []
        for key, payload, account_id, trace_id in events:
            try:
                rows.append(outbox.event_row(exchange_for(key), key, payload,
                                             account_id=account_id, trace_id=trace_id))
            except (ValueError, TypeError):  # unknown key, unserialisable payload: a bug.
                # Log it and keep the others: this greenlet serves every call on the node.
                log.exception("dropping event %s (trace %s)", key, trace_id)
        try:
            with platform_session() as session:
                outbox.insert_rows(session, rows)
            self.batches += 1
        except Exception:  # the outbox is PostgreSQL: a failed insert must not stop the calls
            log.exception("could not write %d events to the outbox", len(rows))


_writer: Optional[EventWriter] = None


def default_writer() -> EventWriter:
    global _writer
    if _writer is None:
        _writer = EventWriter()
    return _writer


class CallEvents:
    """One call's view of the writer: its account and trace id on every event."""

    def __init__(self, writer: EventWriter, trace_id: uuid.UUID,
                 account_id: Optional[uuid.UUID] = None) -> None:
        self._writer = writer
        self.trace_id = trace_id
        self.account_id = account_id

    def emit(self, routing_key: str, payload: dict[str, Any]) -> None:
        self._writer.emit(routing_key, payload, account_id=self.account_id, trace_id=self.trace_id)

    def close(self, timeout: float = FLUSH_TIMEOUT_SECONDS) -> None:
        if not self._writer.flush(timeout):
            log.error("call %s: events not in the outbox after %.0fs", self.trace_id, timeout)
