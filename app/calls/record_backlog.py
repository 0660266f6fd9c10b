"""Call records written while PostgreSQL is away are held, in order, until it is back.

Why: a call that ends during a database blip used to lose its record, its usage and its
``call.ended`` (a traceback instead) — billing lost it for good. Now the session hands its
record here: it is written at once when the database answers; when it does not, the record is
kept in memory (FreeSWITCH's hang-up event and the session's context are all it needs) and a
greenlet retries the held records, oldest first (a few at a time), with capped backoff until the
database takes them. While anything is held, newer records queue behind it.

Before each held record is written the event writer is flushed (``flush_events``), so the
call's earlier events (``call.started``, ``call.answered``…, held by the event writer during the
same outage) reach the outbox before its ``call.ended``. ``then`` (the final status hook) runs
once the record is written. A record the database *rejects* is logged and dropped: retrying it
could never succeed and would hold every later record behind it.
"""
from __future__ import annotations

import logging
import random
import time
from collections import deque
from typing import Callable, Optional

import gevent

from app.calls.hangup import HeaderSource
from app.calls.outage import Outage
from app.calls.records import CallContext, WrittenRecord, write_call_record
from app.db.availability import database_unavailable

log = logging.getLogger(__name__)

# Records held while the database is away; ~10 KB each (the hang-up event) → at most ~500 MB.
MAX_HELD_RECORDS = 50_000
RETRY_INITIAL_SECONDS = 0.2
RETRY_MAX_SECONDS = 5.0
# Held records written at once when the database is back (latency-bound: a few round trips and a
# commit each, so a handful in flight drains a backlog several times faster than one by one).
DRAIN_CONCURRENCY = 8
EVENT_FLUSH_SECONDS = 30.0

Write = Callable[[HeaderSource, CallContext], Optional[WrittenRecord]]
Then = Callable[[WrittenRecord], None]


class RecordBacklog:
    def __init__(self, write: Write = write_call_record, *,
                 flush_events: Optional[Callable[[float], bool]] = None,
                 max_held: int = MAX_HELD_RECORDS) -> None:
        self._write = write
        self._flush_events = flush_events
        self.max_held = max_held
        self._held: deque[tuple[HeaderSource, CallContext, Optional[Then], str]] = deque()
        self._greenlet: Optional[gevent.Greenlet] = None
        self.outage = Outage("call records (PostgreSQL)", log)
        self.dropped = 0
        self._in_flight: set[str] = set()

    @property
    def held_call_ids(self) -> set[str]:
        return {call_id for *_, call_id in self._held} | self._in_flight

    def write(self, event: HeaderSource, ctx: CallContext, call_id: str,
              then: Optional[Then] = None, *, hold: bool = False) -> None:
        """Write this call's record now, or hold it until the database is back. ``hold``: the
        call's events are not in the outbox yet (the drain flushes them first)."""
        if not self._held and not hold:
            try:
                written = self._write(event, ctx)
            except Exception as exc:
                if not database_unavailable(exc):
                    raise
                self.outage.failed(exc, "holding call records")
            else:
                if written is not None and then is not None:
                    then(written)
                return
        if len(self._held) >= self.max_held:
            self.dropped += 1
            log.error("call %s: record dropped, %d records already held (database away)",
                      call_id, len(self._held))
            return
        self._held.append((event, ctx, then, call_id))
        if self._greenlet is None or self._greenlet.dead:
            self._greenlet = gevent.spawn(self._drain)

    def _drain(self) -> None:
        delay = RETRY_INITIAL_SECONDS
        written_late = 0
        started = None
        while self._held:
            batch = [self._held.popleft() for _ in range(min(DRAIN_CONCURRENCY, len(self._held)))]
            self._in_flight = {call_id for *_, call_id in batch}
            if self._flush_events is not None:
                self._flush_events(EVENT_FLUSH_SECONDS)
            jobs = [gevent.spawn(self._attempt, item) for item in batch]
            gevent.joinall(jobs)
            away = [item for item, job in zip(batch, jobs) if job.value is _AWAY]
            for item in reversed(away):  # back at the front, in their order
                self._held.appendleft(item)
            self._in_flight = set()
            done = len(batch) - len(away)
            if done and started is None:
                started = time.monotonic()
                self.outage.recovered(f"writing {len(self._held) + done} held record(s)")
            written_late += done
            if away:
                self.outage.failures += 1
                gevent.sleep(delay * (0.8 + 0.4 * random.random()))
                delay = min(delay * 2, RETRY_MAX_SECONDS)
                continue
            delay = RETRY_INITIAL_SECONDS
        if written_late:
            log.info("%d held call record(s) written in %.1fs", written_late,
                     time.monotonic() - (started or time.monotonic()))

    def _attempt(self, item: tuple[HeaderSource, CallContext, Optional[Then], str]) -> object:
        """Write one held record: _AWAY when the database is still away (kept for later)."""
        event, ctx, then, call_id = item
        try:
            written = self._write(event, ctx)
        except Exception as exc:
            if database_unavailable(exc):
                self.outage.failed(exc, "holding call records")
                return _AWAY
            log.exception("call %s: record rejected by the database; dropped", call_id)
            self.dropped += 1
            return None
        if written is not None and then is not None:
            try:
                then(written)
            except Exception:
                log.exception("call %s: after-record step failed", call_id)
        return written


_AWAY = object()
