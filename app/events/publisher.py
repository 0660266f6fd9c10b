"""The outbox relay: one greenlet owns the process's one RabbitMQ connection.

Why one greenlet: pika's BlockingConnection is neither thread- nor greenlet-safe, so exactly
one greenlet touches it; producers never do — they insert outbox rows and wake it.

Delivery is at-least-once: a batch of rows is published inside one AMQP transaction and the
rows are marked published only after the broker's ``tx.commit-ok`` (it has taken every message,
persistent ones written, as a publisher confirm says of one message; one round trip per batch
instead of one per event). If the connection dies between the commit and the UPDATE, or before
the commit completes, the batch is published again after reconnecting — with the SAME message
ids, so consumers de-duplicate on the envelope ``id`` (``app.events.consumer.RecentIds``).
"""
from __future__ import annotations

import contextlib
import logging
import random
import socket
import time
from typing import Any, Callable, ContextManager

import gevent
import gevent.event
import pika
import pika.exceptions
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from app import limits
from app.db.engine import relay_session
from app.events import outbox
from app.events.envelope import CONTENT_TYPE
from app.events.wake_listener import WakeListener
from app.events.work_queues import declare_every_queue
from app.settings import get_settings

log = logging.getLogger(__name__)

# Failures that mean "the broker or the path to it is gone": reconnect and retry.
BROKER_ERRORS = (pika.exceptions.AMQPError, OSError, socket.timeout, gevent.Timeout)


def connection_parameters(amqp_url: str, *, heartbeat: int = 30) -> pika.URLParameters:
    params = pika.URLParameters(amqp_url)
    params.heartbeat = heartbeat
    params.blocked_connection_timeout = limits.EVENT_CONFIRM_TIMEOUT_SECONDS
    params.connection_attempts = 1
    params.socket_timeout = 5
    params.client_properties = {"connection_name": "saas-sbc outbox publisher"}
    return params


def abandon_connection(conn: pika.BlockingConnection, grace_seconds: float = 1.0) -> None:
    """Close politely if the broker answers within ``grace_seconds``, else drop the socket.

    Why: ``BlockingConnection.close()`` waits for the broker's Close-Ok; across a network
    partition (packets dropped, no RST) that wait never ends and the relay would hang with it.
    """
    try:
        with gevent.Timeout(grace_seconds):
            if conn.is_open:
                conn.close()
        return
    except (gevent.Timeout, Exception) as exc:  # no Close-Ok (partition) or a broken channel
        log.debug("polite close failed (%s); dropping the socket", exc)
    # pika has no public "abort": reach the socket of the underlying transport
    transport = getattr(getattr(conn, "_impl", None), "_transport", None)
    sock = getattr(transport, "_sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed by the peer
            sock.close()


class OutboxPublisher:
    """Relays ``event_outbox`` rows to RabbitMQ in order, committed per batch, reconnecting forever."""

    def __init__(
        self,
        amqp_url: str | None = None,
        *,
        session_factory: Callable[[], ContextManager[Session]] = relay_session,
        batch_size: int = limits.EVENT_OUTBOX_BATCH,
        poll_seconds: float = 1.0,
        backoff_seconds: tuple[float, float] = limits.EVENT_RECONNECT_BACKOFF_SECONDS,
        confirm_timeout_seconds: float = limits.EVENT_CONFIRM_TIMEOUT_SECONDS,
        connect_timeout_seconds: float = 10.0,
        retention_seconds: float | Callable[[], float] = limits.EVENT_OUTBOX_RETENTION_SECONDS,
        prune_every_seconds: float = 300.0,
        listen_dsn: str | None = None,
    ) -> None:
        self.amqp_url = amqp_url or get_settings().amqp_url
        self.session_factory = session_factory
        self.batch_size = batch_size
        self.coalesce_seconds = limits.EVENT_RELAY_COALESCE_SECONDS
        self.poll_seconds = poll_seconds
        self.backoff_seconds = backoff_seconds
        self.confirm_timeout = confirm_timeout_seconds
        self.connect_timeout = connect_timeout_seconds
        self.retention_seconds = retention_seconds
        self.prune_every = prune_every_seconds
        self._wake = gevent.event.Event()
        self._idle = gevent.event.Event()
        self._stopping = False
        self._stop_event = gevent.event.Event()
        self._greenlet: gevent.Greenlet | None = None
        self._conn: pika.BlockingConnection | None = None
        self._channel: Any = None  # pika's BlockingChannel (pika has no types)
        self._last_prune = 0.0
        # other processes' urgent commits (NOTIFY) wake this relay too: app/events/wake_listener.py
        self._listener = WakeListener(listen_dsn, self.wake) if listen_dsn else None
        # figures for operators and tests
        self.published = 0
        self.connects = 0
        self.failures = 0

    # lifecycle ---------------------------------------------------------------------------
    def start(self) -> "OutboxPublisher":
        if self._greenlet is None or self._greenlet.dead:
            self._stopping = False
            self._stop_event.clear()
            outbox.add_waker(self.wake)
            self._greenlet = gevent.spawn(self._run)
            if self._listener is not None:
                self._listener.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Finish the batch in flight, then close the connection (rows left stay queued)."""
        self._stopping = True
        self._stop_event.set()
        self._wake.set()
        outbox.remove_waker(self.wake)
        if self._listener is not None:
            self._listener.stop()
        if self._greenlet is not None:
            self._greenlet.join(timeout)
            if not self._greenlet.dead:
                self._greenlet.kill(block=True, timeout=1)
        self._close()

    def wake(self) -> None:
        self._idle.clear()
        self._wake.set()

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.is_open

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until no unpublished row is left (tests, benchmarks, clean shutdown)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.wake()
            if not self._idle.wait(remaining):
                return False
            with self.session_factory() as session:
                if outbox.pending_count(session) == 0:
                    return True
            gevent.sleep(0.05)

    # the loop ----------------------------------------------------------------------------
    def _run(self) -> None:
        delay = self.backoff_seconds[0]
        while not self._stopping:
            try:
                self._ensure_connection()
                sent = self._publish_batch()
                delay = self.backoff_seconds[0]
                if sent == 0:
                    self._idle.set()
                    self._maybe_prune()
                    self._wait_for_work()
                elif sent < self.batch_size:
                    self._stop_event.wait(self.coalesce_seconds)  # let the next batch gather
            except BROKER_ERRORS as exc:
                self.failures += 1
                log.warning("event broker unavailable (%s: %s); retrying in %.1fs",
                            type(exc).__name__, exc, delay)
                self._close()
                self._sleep(delay)
                delay = min(delay * 2, self.backoff_seconds[1])
            except SQLAlchemyError as exc:
                self.failures += 1
                log.warning("event outbox unavailable (%s); retrying in %.1fs", exc, delay)
                self._sleep(delay)
                delay = min(delay * 2, self.backoff_seconds[1])
            except Exception:  # never let the relay die silently
                self.failures += 1
                log.exception("event publisher error; retrying in %.1fs", delay)
                self._close()
                self._sleep(delay)
                delay = min(delay * 2, self.backoff_seconds[1])

    def _sleep(self, seconds: float) -> None:
        # jitter keeps many controllers from reconnecting in lock-step after a broker restart;
        # stop() interrupts the wait
        self._stop_event.wait(seconds * (0.8 + random.random() * 0.4))

    def _wait_for_work(self) -> None:
        self._wake.wait(self.poll_seconds)
        self._wake.clear()
        if self._conn is not None and self._conn.is_open:
            # services AMQP heartbeats while idle: BlockingConnection only does I/O when called
            self._conn.process_data_events(time_limit=0)

    def _ensure_connection(self) -> None:
        if self._conn is not None and self._conn.is_open and self._channel is not None \
                and self._channel.is_open:
            return
        self._close()
        with gevent.Timeout(self.connect_timeout):
            conn = pika.BlockingConnection(connection_parameters(self.amqp_url))
            channel = conn.channel()
            channel.tx_select()  # batches are committed (see _publish_batch)
            declare_every_queue(channel)  # every message has its queue, even before its consumer
        self._conn, self._channel = conn, channel
        self.connects += 1
        log.info("event publisher connected (connection #%d)", self.connects)

    def _close(self) -> None:
        conn, self._conn, self._channel = self._conn, None, None
        if conn is not None:
            abandon_connection(conn)

    def _publish_batch(self) -> int:
        """Claim a batch, publish it inside one AMQP transaction, mark it published once the
        broker committed it. One commit per batch instead of one confirm per message: waiting
        for each confirm cost a round trip and most of the relay's CPU per event."""
        messages = []
        error: BaseException | None = None
        with self.session_factory() as session:
            rows = outbox.claim_batch(session, self.batch_size)
            for row in rows:
                try:
                    messages.append((row, *self._message(row)))
                except ValueError as exc:
                    # Not an envelope: it can never be published, and must not block the rows
                    # behind it. Set aside (kept, with the reason) for an operator to inspect.
                    log.error("outbox row %s is not an event envelope; set aside: %s", row.id, exc)
                    outbox.mark_unpublishable(session, row.id, str(exc))
            if messages:
                try:
                    with gevent.Timeout(self.confirm_timeout):
                        for row, body, props in messages:
                            self._channel.basic_publish(row.exchange, row.routing_key, body, props)
                        # tx.commit-ok: the broker has taken every message of the batch
                        # (persistent ones written), as a confirm says of one
                        self._channel.tx_commit()
                except BROKER_ERRORS as exc:
                    # nothing of an uncommitted batch counts as published: all of it goes again
                    # (same ids, consumers de-duplicate)
                    error = exc
                    for row, *_ in messages:
                        outbox.mark_failed(session, row.id, f"{type(exc).__name__}: {exc}")
                else:
                    outbox.mark_published(session, [row.id for row, *_ in messages])
        if error is not None:
            raise error
        self.published += len(messages)
        return len(messages)

    @staticmethod
    def _message(row: outbox.OutboxRow) -> tuple[bytes, pika.BasicProperties]:
        """The AMQP body and properties of an outbox row (ValueError: not an envelope)."""
        envelope = row.envelope()
        props = pika.BasicProperties(
            content_type=CONTENT_TYPE,
            delivery_mode=pika.DeliveryMode.Persistent,
            message_id=str(row.id),
            type=row.routing_key,
            app_id=envelope.source or None,
            headers={"version": envelope.version},
        )
        return envelope.to_json(), props

    def _maybe_prune(self) -> None:
        now = gevent.get_hub().loop.now()
        if now - self._last_prune < self.prune_every:
            return
        self._last_prune = now
        with self.session_factory() as session:
            # a callable is read at each prune: events.outbox_retention_seconds reloads live
            retention = self.retention_seconds() if callable(self.retention_seconds) else self.retention_seconds
            removed = outbox.prune(session, retention)
        if removed:
            log.info("pruned %d published outbox rows", removed)


_publisher: OutboxPublisher | None = None


def start_publisher(amqp_url: str | None = None, **kwargs) -> OutboxPublisher:
    """The process-wide relay (controllers and workers run one; ``sbc api`` does not). It also
    listens for other processes' urgent events (``call.control`` from the API)."""
    global _publisher
    if _publisher is None:
        kwargs.setdefault("listen_dsn", get_settings().platform_database_url)
        _publisher = OutboxPublisher(amqp_url, **kwargs)
    return _publisher.start()


def stop_publisher(timeout: float = 5.0) -> None:
    global _publisher
    if _publisher is not None:
        _publisher.stop(timeout)
        _publisher = None
