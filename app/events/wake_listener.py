"""Wakes this process's outbox relay when another process commits an urgent event.

Why: the relay (app/events/publisher.py) is woken in-process after a commit, and otherwise
polls the outbox every second. ``sbc api`` runs no relay (its database role may INSERT outbox
rows, not read them), so a ``call.control`` an agent sent waited up to that second for a
controller's poll. Urgent producers add a ``NOTIFY`` to their transaction
(``outbox.publish_in(urgent=True)``); PostgreSQL delivers it only if that transaction commits,
to every session that ``LISTEN``s — here one dedicated connection per relay.

Publishing stays in one place (the relay): this only says "look now". A missed notification
(listener reconnecting, database restarted) costs latency, never the event: the poll remains.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Callable

import gevent
import gevent.event
import gevent.socket
import psycopg2
import psycopg2.extensions

from app.events.outbox import NOTIFY_CHANNEL

log = logging.getLogger(__name__)

IDLE_CHECK_SECONDS = 30.0  # a silent connection is pinged this often (a dead one is replaced)


class WakeListener:
    def __init__(self, dsn: str, on_wake: Callable[[], None],
                 backoff_seconds: tuple[float, float] = (0.5, 30.0)) -> None:
        self.dsn = dsn
        self.on_wake = on_wake
        self.backoff_seconds = backoff_seconds
        self.listening = gevent.event.Event()  # set while LISTEN is in place (tests)
        self.wakes = 0
        self.connects = 0
        self._stop = gevent.event.Event()
        self._greenlet: gevent.Greenlet | None = None
        self._conn = None

    def start(self) -> "WakeListener":
        if self._greenlet is None or self._greenlet.dead:
            self._stop.clear()
            self._greenlet = gevent.spawn(self._run)
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._greenlet is not None:
            self._greenlet.kill(block=True, timeout=2)
        self._close()

    def _run(self) -> None:
        delay = self.backoff_seconds[0]
        while not self._stop.is_set():
            try:
                self._listen()
            except (psycopg2.Error, OSError) as exc:
                log.warning("outbox wake listener lost the database (%s); retrying in %.1fs", exc, delay)
            self.listening.clear()
            self._close()
            self._stop.wait(delay)
            delay = min(delay * 2, self.backoff_seconds[1])

    def _listen(self) -> None:
        conn = self._conn = psycopg2.connect(self.dsn, application_name="sbc outbox wake")
        conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
        with conn.cursor() as cur:
            cur.execute(f"LISTEN {NOTIFY_CHANNEL}")
        self.connects += 1
        self.listening.set()
        self.on_wake()  # whatever was notified while not listening
        while not self._stop.is_set():
            try:
                gevent.socket.wait_read(conn.fileno(), timeout=IDLE_CHECK_SECONDS)
                conn.poll()
            except TimeoutError:  # socket.timeout: a silent link, check it is still there
                with conn.cursor() as cur:
                    cur.execute("SELECT 1")  # (a notification read meanwhile is handled below)
            if conn.notifies:
                conn.notifies.clear()  # many commits, one wake: the relay takes them all in a batch
                self.wakes += 1
                self.on_wake()

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg2.Error):  # already broken: nothing to close
                conn.close()
