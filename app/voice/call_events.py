"""Bus events of the calls on this controller, written to the outbox off the call path.

Why: each event is an outbox row, and one commit per event (a disk flush) caps a controller at
a few hundred events a second — below a few hundred calls a second with several events each.
One writer greenlet drains a single FIFO and writes whatever has queued up in one transaction,
so commits are shared across calls while each call's events keep their order; after the first
event of a batch it waits ``EVENT_WRITE_COALESCE_SECONDS`` so that a call's burst of events
(started, ringing, answered...) and those of the calls around it share one commit. The session
waits on a flush marker before writing its call record, so ``call.ended`` always comes last.

PostgreSQL going away (restart, failover, network) must lose nothing and stall no call: the
writer keeps the batch in hand and retries it with capped exponential backoff while the FIFO
behind it keeps growing, so order is kept and ``emit()`` never waits. A batch the database
*rejects* (a row it can never store) is written again one event at a time so that only the bad
event is dropped; retrying it as a whole would wedge every call's events behind it forever.
Rows are built when emitted, so ``occurred_at`` and the outbox order (``created_at``) say when
the call emitted an event, not when the database took it: held events keep their time.
"""
from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable
from typing import Any, ContextManager, Optional

import gevent
import gevent.event
import gevent.queue
from sqlalchemy.orm import Session

from app import limits
from app.db.availability import database_unavailable
from app.db.engine import platform_session
from app.events import outbox
from app.events.exchanges import exchange_for

log = logging.getLogger(__name__)

BATCH_MAX_EVENTS = 500
FLUSH_TIMEOUT_SECONDS = 10.0
# Events held while the outbox cannot be written (queued plus the batch in hand). Reached only
# after a long outage (a busy node emits a few hundred events a second, so this is minutes of
# traffic) and costs roughly 1-2 KB each, i.e. at most a few hundred MB.
MAX_HELD_EVENTS = 100_000
RETRY_INITIAL_SECONDS = 0.1
RETRY_MAX_SECONDS = 5.0  # a PostgreSQL restart takes seconds: resume soon after it is back
OVERFLOW_LOG_EVERY = 1000

_Row = dict[str, Any]
SessionScope = Callable[[], ContextManager[Session]]


class EventWriter:
    """The FIFO and its writer greenlet.

    When ``max_held`` events are held (the database has been away for long), new events are
    dropped, counted in ``dropped_overflow`` and logged, rather than old ones: an event once
    accepted is never discarded for lack of room, so what a flush covered stays covered, and
    while the outage lasts each call keeps its earliest events (its ``call.started`` is never
    lost in favour of a later ``call.hold``). Flush markers are never dropped.
    """

    def __init__(self, session_scope: SessionScope = platform_session, *,
                 max_held: int = MAX_HELD_EVENTS, retry_initial: float = RETRY_INITIAL_SECONDS,
                 retry_max: float = RETRY_MAX_SECONDS,
                 coalesce: float = limits.EVENT_WRITE_COALESCE_SECONDS) -> None:
        self._session_scope = session_scope
        self.coalesce = coalesce
        self.max_held = max_held
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self._queue: gevent.queue.Queue = gevent.queue.Queue()
        self.held = 0  # events emitted and not yet written (or dropped as bad)
        self.batches = 0
        self.retries = 0  # inserts retried because the database was unavailable
        self.dropped_overflow = 0
        self.dropped_bad = 0
        self.unavailable = False  # the database is away: the batch in hand is being retried
        self._greenlet = gevent.spawn(self._run)

    def emit(self, routing_key: str, payload: dict[str, Any], *, account_id: Optional[uuid.UUID],
             trace_id: Optional[uuid.UUID]) -> None:
        if self.held >= self.max_held:
            self.dropped_overflow += 1
            if self.dropped_overflow == 1 or self.dropped_overflow % OVERFLOW_LOG_EVERY == 0:
                log.error("outbox writer holds %d events (database unavailable): dropped %d new "
                          "event(s) so far, latest %s (trace %s)", self.held, self.dropped_overflow,
                          routing_key, trace_id)
            return
        try:
            row = outbox.event_row(exchange_for(routing_key), routing_key, payload,
                                   account_id=account_id, trace_id=trace_id)
        except (ValueError, TypeError):  # unknown key, unserialisable payload: a bug.
            # Log it and go on: the call must not fail because of its telemetry.
            self.dropped_bad += 1
            log.exception("dropping event %s (trace %s)", routing_key, trace_id)
            return
        self.held += 1
        self._queue.put(row)

    def flush(self, timeout: float = FLUSH_TIMEOUT_SECONDS) -> bool:
        """Block until everything queued before this call is in the outbox (False on timeout)."""
        marker = gevent.event.Event()
        self._queue.put(marker)
        return marker.wait(timeout)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            if self.coalesce and isinstance(batch[0], dict):
                gevent.sleep(self.coalesce)  # let the burst this event starts join its transaction
            while len(batch) < BATCH_MAX_EVENTS and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            rows = [item for item in batch if isinstance(item, dict)]
            if rows:
                self._write(rows)
                self.held -= len(rows)
            for item in batch:
                if isinstance(item, gevent.event.Event):
                    item.set()

    def _write(self, rows: list[_Row]) -> None:
        error = self._insert(rows)
        if error is None:
            return
        log.warning("the outbox rejected a batch of %d event(s) (%s); writing them one by one",
                    len(rows), error)
        for row in rows:
            error = self._insert([row])
            if error is not None:
                self.dropped_bad += 1
                log.error("dropping event %s %s (trace %s): the outbox rejects it: %s",
                          row["routing_key"], row["id"], row["body"].get("trace_id"), error)

    def _insert(self, rows: list[_Row]) -> Optional[Exception]:
        """Insert ``rows`` in one transaction, retrying for as long as the database is
        unavailable. Returns None once written, or the error that rejects these rows."""
        delay = self.retry_initial
        failures = 0
        while True:
            try:
                with self._session_scope() as session:
                    outbox.insert_rows(session, rows)
            except Exception as error:  # classified below; the writer must outlive any error
                if not database_unavailable(error):
                    return error
                failures += 1
                self.retries += 1
                self.unavailable = True
                if failures == 1:
                    log.error("outbox unavailable (%s); holding %d event(s), retrying with backoff",
                              _first_line(error), self.held)
                gevent.sleep(delay * (0.8 + 0.4 * random.random()))
                delay = min(delay * 2, self.retry_max)
                continue
            self.unavailable = False
            if failures:
                log.warning("outbox writable again after %d failed attempt(s); %d event(s) were "
                            "dropped for lack of room so far", failures, self.dropped_overflow)
            self.batches += 1
            return None


def _first_line(error: BaseException) -> str:
    return str(error).split("\n", 1)[0]


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

    def close(self, timeout: float = FLUSH_TIMEOUT_SECONDS) -> bool:
        """Wait until this call's events are in the outbox; False when they are not yet."""
        if self._writer.flush(timeout):
            return True
        if self._writer.unavailable:  # the outage is logged once by the writer, not per call
            log.info("call %s: events held until the database is back", self.trace_id)
        else:
            log.error("call %s: events not in the outbox after %.0fs", self.trace_id, timeout)
        return False
