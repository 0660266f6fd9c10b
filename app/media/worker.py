"""The media worker: consumes ``media.recording.completed`` from a durable queue and runs the
pipeline, one job at a time per process (``sbc media-worker``; ``sbc workers`` starts
``transcription.workers`` of them).

Broker topology (declared idempotently by every worker):

* ``media.transcription`` — a **quorum** queue bound to ``media.events`` /
  ``media.recording.completed``. Quorum queues are replicated, survive broker restarts, and
  count deliveries (``x-delivery-count``): a job whose worker died mid-job (no ack, the broker
  requeues it) is counted like one that asked for a retry, so even a file that crashes the
  engine's native code every time cannot loop forever.
* ``media.transcription.dead`` — where jobs go when their deliveries are used up, or when the
  message is not a job at all (dead-letter exchange ``media.dead``). Ops inspect it with
  ``rabbitmqctl list_queues`` / the management UI and can move messages back.

Competing consumers: every worker consumes the same queue with ``prefetch_count=1`` and
acknowledges only after the job's transaction committed, so a job is never lost with a worker
and never held by a busy one. Transcription is CPU-bound native code that blocks this process
for seconds, so the connection runs without AMQP heartbeats (a missed heartbeat would make the
broker drop a busy worker and redeliver its job); a dead peer is still noticed by the socket.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Callable

import gevent
import gevent.event
import pika
import pika.exceptions
from sqlalchemy.exc import SQLAlchemyError

from app import limits
from app.events.broker_loop import BrokerLoop
from app.events.envelope import Envelope
from app.events.exchanges import declare_all
from app.events.publisher import abandon_connection, connection_parameters
from app.events.work_queues import MEDIA_DEAD_LETTER_QUEUE, MEDIA_TRANSCRIPTION, declare, declare_media_dead_letters
from app.media.jobs import BadJob, RecordingJob
from app.media.pipeline import Outcome, Pipeline, Retry
from app.settings import get_settings

log = logging.getLogger(__name__)

QUEUE = MEDIA_TRANSCRIPTION.name
DEAD_LETTER_QUEUE = MEDIA_DEAD_LETTER_QUEUE


def declare_topology(channel) -> None:
    """Exchanges, the job queue and its dead-letter queue (app/events/work_queues.py: the same
    arguments every time, as the broker refuses a mismatch)."""
    declare_all(channel)
    declare_media_dead_letters(channel)
    declare(channel, MEDIA_TRANSCRIPTION)


def retry_delay(attempt: int) -> float:
    first, cap = limits.MEDIA_JOB_RETRY_DELAY_SECONDS
    return min(first * 2 ** (attempt - 1), cap)


class MediaWorker(BrokerLoop):
    """One consumer; ``start()`` runs it in a greenlet, reconnecting with backoff."""

    role = "media worker"
    stop_timeout = 10.0  # finish the job in hand (its ack included), then close

    def __init__(self, pipeline: Pipeline, *, amqp_url: str | None = None,
                 sleep: Callable[[float], None] = gevent.sleep,
                 backoff_seconds: tuple[float, float] = (0.2, 10.0)) -> None:
        self.pipeline = pipeline
        self.amqp_url = amqp_url or get_settings().amqp_url
        self.sleep = sleep
        super().__init__(backoff_seconds)
        self.outcomes: list[tuple[str, Outcome | str]] = []  # (recording id, outcome) for ops/tests

    def _consume(self) -> None:
        params = connection_parameters(self.amqp_url, heartbeat=0)
        params.client_properties = {"connection_name": "saas-sbc media worker"}
        conn = pika.BlockingConnection(params)
        self._conn = conn
        self.connects += 1
        try:
            channel = conn.channel()
            declare_topology(channel)
            channel.basic_qos(prefetch_count=1)
            self.ready.set()
            for method, properties, body in channel.consume(QUEUE, inactivity_timeout=0.2):
                if self._stopping:
                    break
                if method is None:
                    continue
                self.handle(channel, method, properties, body)
        finally:
            self._conn = None
            abandon_connection(conn)

    def handle(self, channel, method, properties, body: bytes) -> None:
        """One delivery: run, then ack / requeue after a delay / dead-letter."""
        headers: dict[str, Any] = getattr(properties, "headers", None) or {}
        attempt = int(headers.get("x-delivery-count", 0)) + 1
        try:
            job = RecordingJob.from_envelope(Envelope.from_json(body))
        except (BadJob, ValueError, json.JSONDecodeError) as exc:
            log.error("dead-lettering a message that is not a recording job: %s", exc)
            self.outcomes.append(("?", "bad_job"))
            channel.basic_reject(method.delivery_tag, requeue=False)
            return
        if attempt > limits.MEDIA_JOB_MAX_DELIVERIES:
            # every allowed delivery ended without an ack: the worker died each time
            self._give_up(channel, method, job, attempt, "worker_crashed",
                          f"{attempt - 1} deliveries without a result")
            return
        try:
            outcome = self.pipeline.run(job, attempt=attempt)
        except pika.exceptions.AMQPError:
            raise  # the connection is gone: reconnect, the job comes back unacked
        except Exception as exc:  # Retry, the database, or a bug: bounded like the rest
            self._retry_or_give_up(channel, method, job, attempt, exc)
            return
        self.outcomes.append((str(job.id), outcome))
        channel.basic_ack(method.delivery_tag)

    def _retry_or_give_up(self, channel, method, job: RecordingJob, attempt: int,
                          exc: Exception) -> None:
        if attempt >= limits.MEDIA_JOB_MAX_DELIVERIES:
            reason = exc.reason if isinstance(exc, Retry) else (
                "database_error" if isinstance(exc, SQLAlchemyError) else "internal_error")
            self._give_up(channel, method, job, attempt, reason, f"{type(exc).__name__}: {exc}")
            return
        delay = retry_delay(attempt)
        log.warning("recording %s: attempt %d failed (%s); retrying in %.1fs", job.id, attempt,
                    exc, delay, exc_info=not isinstance(exc, Retry))
        self.outcomes.append((str(job.id), "retry"))
        self.sleep(delay)
        channel.basic_nack(method.delivery_tag, requeue=True)

    def _give_up(self, channel, method, job: RecordingJob, attempt: int, reason: str,
                 detail: str) -> None:
        """Mark the job failed (media.transcription.failed) if the database lets us, and
        dead-letter the message either way: ops can inspect and replay it."""
        try:
            self.outcomes.append((str(job.id), self.pipeline.give_up(job, reason, detail, attempt)))
        except Exception:
            log.exception("recording %s could not be marked failed; dead-lettered only", job.id)
            self.outcomes.append((str(job.id), "dead_lettered"))
        channel.basic_reject(method.delivery_tag, requeue=False)
