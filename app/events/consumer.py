"""A small consumer for workers, the config-reload listener and tests.

Delivery is at-least-once (see ``app.events.publisher``): the same envelope ``id`` can arrive
twice after a publisher reconnect. ``EventConsumer`` therefore de-duplicates on that id with a
``RecentIds`` window (per process) or ``RedisSeenIds`` (shared by a worker fleet) before calling
the handler, and acknowledges a message only after the handler returned.
"""
from __future__ import annotations

import json
import logging
from collections import OrderedDict
from typing import Any, Callable, Iterable, Protocol

import pika
import redis

from app.events.broker_loop import BrokerLoop
from app.events.envelope import Envelope
from app.events.exchanges import declare_all
from app.events.publisher import abandon_connection, connection_parameters
from app.events.work_queues import WorkQueue
from app.settings import get_settings

log = logging.getLogger(__name__)

# what a handler returns is ignored (RoutingReloader.handle_event returns what it changed)
Handler = Callable[[Envelope], object]


class SeenIds(Protocol):
    def first_time(self, event_id: str) -> bool:
        """True the first time ``event_id`` is offered, False for a duplicate."""


class RecentIds:
    """The last ``capacity`` event ids seen by this process (duplicates arrive close together:
    a re-publish follows the original within seconds, so a bounded window suffices)."""

    def __init__(self, capacity: int = 100_000) -> None:
        self.capacity = capacity
        self._ids: OrderedDict[str, None] = OrderedDict()

    def first_time(self, event_id: str) -> bool:
        if event_id in self._ids:
            self._ids.move_to_end(event_id)
            return False
        self._ids[event_id] = None
        if len(self._ids) > self.capacity:
            self._ids.popitem(last=False)
        return True


class RedisSeenIds:
    """Fleet-wide de-duplication: SET NX with a TTL per id, under the run's key prefix."""

    def __init__(self, client: redis.Redis, *, name: str, ttl_seconds: int = 24 * 3600) -> None:
        self.client = client
        self.prefix = f"{get_settings().redis_key_prefix}events:seen:{name}:"
        self.ttl = ttl_seconds

    def first_time(self, event_id: str) -> bool:
        return bool(self.client.set(self.prefix + event_id, 1, nx=True, ex=self.ttl))


class OnBoundFailed(ConnectionError):
    """``on_bound`` raised: handled like a lost connection (backoff, reconnect, run it again),
    so a consumer is never ready without having caught up."""


class EventConsumer(BrokerLoop):
    """Binds a queue to ``bindings`` [(exchange, binding key)] and calls ``handler`` per new
    event, in its own greenlet, reconnecting with backoff. Without ``queue`` the queue is
    server-named, exclusive and auto-deleted (a live listener that may miss events while
    disconnected); with ``queue`` it is durable and keeps events while the consumer is away.
    A handler that raises gets the message rejected without requeue (no poison loops).
    ``queue_arguments`` are the durable queue's (e.g. ``x-single-active-consumer``); a broker
    that already has the queue with other arguments refuses the declaration. ``on_bound`` runs
    after each (re)connect once the queue is bound, before the first delivery: a listener on a
    server-named queue catches up there on what it missed while it had no queue."""

    role = "event consumer"

    @classmethod
    def of_work_queue(cls, queue: WorkQueue, handler: Handler, **kw: Any) -> "EventConsumer":
        """A consumer of one of the platform's durable work queues (app/events/work_queues.py:
        its name, bindings and arguments, which the publisher declares too)."""
        return cls(queue.bindings, handler, queue=queue.name, queue_arguments=queue.arguments or None, **kw)

    def __init__(
        self,
        bindings: Iterable[tuple[str, str]],
        handler: Handler,
        *,
        amqp_url: str | None = None,
        queue: str | None = None,
        seen: SeenIds | None = None,
        prefetch: int = 100,
        backoff_seconds: tuple[float, float] = (0.2, 10.0),
        queue_arguments: dict | None = None,
        on_bound: Callable[[], None] | None = None,
    ) -> None:
        self.bindings = list(bindings)
        self.on_bound = on_bound
        self.queue_arguments = queue_arguments
        self.handler = handler
        self.amqp_url = amqp_url or get_settings().amqp_url
        self.queue_name = queue
        self.seen = seen if seen is not None else RecentIds()
        self.prefetch = prefetch
        super().__init__(backoff_seconds)
        self.duplicates = 0
        self.delivered = 0

    def _consume(self) -> None:
        conn = pika.BlockingConnection(connection_parameters(self.amqp_url))
        self._conn = conn
        self.connects += 1
        try:
            channel = conn.channel()
            declare_all(channel)
            if self.queue_name:
                queue = channel.queue_declare(self.queue_name, durable=True,
                                              arguments=self.queue_arguments).method.queue
            else:
                queue = channel.queue_declare("", exclusive=True, auto_delete=True).method.queue
            for exchange, key in self.bindings:
                channel.queue_bind(queue, exchange, routing_key=key)
            channel.basic_qos(prefetch_count=self.prefetch)
            if self.on_bound is not None:  # events from here on wait in the queue meanwhile
                self._run_on_bound(self.on_bound)
            self.ready.set()
            for method, _props, body in channel.consume(queue, inactivity_timeout=0.2):
                if self._stopping:
                    break
                if method is None:
                    continue
                self._deliver(channel, method, body)
        finally:
            self._conn = None
            abandon_connection(conn)

    def _run_on_bound(self, on_bound: Callable[[], None]) -> None:
        try:
            on_bound()
        except Exception as exc:
            log.exception("%s: catching up after binding failed; reconnecting to try again", self.role)
            raise OnBoundFailed(f"catch-up failed: {exc}") from exc

    def _deliver(self, channel, method, body: bytes) -> None:
        try:
            envelope = Envelope.from_json(body)
        except (ValueError, json.JSONDecodeError):
            log.warning("dropping a message that is not an event envelope (%d bytes)", len(body))
            channel.basic_reject(method.delivery_tag, requeue=False)
            return
        if not self.seen.first_time(envelope.id):
            self.duplicates += 1
            channel.basic_ack(method.delivery_tag)
            return
        try:
            self.handler(envelope)
        except Exception:
            log.exception("event handler failed for %s %s", envelope.type, envelope.id)
            channel.basic_reject(method.delivery_tag, requeue=False)
            return
        self.delivered += 1
        channel.basic_ack(method.delivery_tag)
