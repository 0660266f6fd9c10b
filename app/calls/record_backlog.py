"""Call records written while PostgreSQL is away are held, in order, until it is back.

Why: a call that ends during a database blip used to lose its record, its usage and its
``call.ended`` (a traceback instead) — billing lost it for good. Now the session hands its
record here: it is written at once when the database answers; when it does not, the record is
kept in memory (FreeSWITCH's hang-up event and the session's context are all it needs) and a
greenlet retries the oldest held record with capped backoff until the database takes it. While
anything is held, newer records queue behind it, so records keep their order.

Before each held record is written the event writer is flushed (``flush_events``), so the
call's earlier events (``call.started``, ``call.answered``…, held by the event writer during the
same outage) reach the outbox before its ``call.ended``. ``then`` (the final status hook) runs
once the record is written. A record the database *rejects* is logged and dropped: retrying it
could never succeed and would hold every later record behind it.
"""
from __future__ import annotations

import logging
import random
from collections import deque
from typing import Callable, Optional

import gevent

from app.calls.outage import Outage
from app.calls.records import CallContext, WrittenRecord, write_call_record
from app.calls.hangup import HeaderSource
from app.db.availability import database_unavailable

log = logging.getLogger(__name__)

# Records held while the database is away; ~10 KB each (the hang-up event) → at most ~500 MB.
MAX_HELD_RECORDS = 50_000
RETRY_INITIAL_SECONDS = 0.2
RETRY_MAX_SECONDS = 5.0
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
        self.written_late = 0

    @property
    def held_call_ids(self) -> set[str]:
        return {call_id for *_, call_id in self._held}

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
        while self._held:
            event, ctx, then, call_id = self._held[0]
            if self._flush_events is not None:
                self._flush_events(EVENT_FLUSH_SECONDS)
            try:
                written = self._write(event, ctx)
            except Exception as exc:
                if database_unavailable(exc):
                    self.outage.failed(exc, "holding call records")
                    gevent.sleep(delay * (0.8 + 0.4 * random.random()))
                    delay = min(delay * 2, RETRY_MAX_SECONDS)
                    continue
                log.exception("call %s: record rejected by the database; dropped", call_id)
                self.dropped += 1
                self._held.popleft()
                continue
            self._held.popleft()
            self.written_late += 1
            delay = RETRY_INITIAL_SECONDS
            if written is not None and then is not None:
                try:
                    then(written)
                except Exception:
                    log.exception("call %s: after-record step failed", call_id)
        self.outage.recovered(f"{self.written_late} held record(s) written")
        self.written_late = 0
