"""The lifecycle every RabbitMQ consumer shares: one greenlet owns one BlockingConnection
(pika is not greenlet-safe), runs ``_consume`` until the connection breaks, and reconnects with
a capped, doubling backoff; ``stop`` lets the message in hand finish, then drops the link."""
from __future__ import annotations

import abc
import logging

import gevent
import gevent.event
import pika

from app.events.publisher import BROKER_ERRORS, abandon_connection

log = logging.getLogger(__name__)


class BrokerLoop(abc.ABC):
    role = "consumer"          # named in the reconnect log line
    stop_timeout = 5.0         # seconds ``stop`` waits for the message in hand

    def __init__(self, backoff_seconds: tuple[float, float]) -> None:
        self.backoff_seconds = backoff_seconds
        self.ready = gevent.event.Event()  # set once the queue is bound (each connection)
        self.connects = 0
        self._stopping = False
        self._stop_event = gevent.event.Event()
        self._greenlet: gevent.Greenlet | None = None
        self._conn: pika.BlockingConnection | None = None

    def start(self):
        self._greenlet = gevent.spawn(self._run)
        return self

    def stop(self, timeout: float | None = None) -> None:
        self._stopping = True
        self._stop_event.set()
        if self._greenlet is not None:
            self._greenlet.join(self.stop_timeout if timeout is None else timeout)
            if not self._greenlet.dead:
                self._greenlet.kill(block=True, timeout=1)
        conn, self._conn = self._conn, None
        if conn is not None:
            abandon_connection(conn)

    def _run(self) -> None:
        delay = self.backoff_seconds[0]
        while not self._stopping:
            try:
                self._consume()
                delay = self.backoff_seconds[0]
            except BROKER_ERRORS as exc:
                self.ready.clear()
                log.warning("%s lost the broker (%s); retrying in %.1fs", self.role, exc, delay)
                self._stop_event.wait(delay)
                delay = min(delay * 2, self.backoff_seconds[1])

    @abc.abstractmethod
    def _consume(self) -> None:
        """One connection's consuming, until it breaks (each consumer defines its own)."""
