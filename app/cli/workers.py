"""``sbc workers``: background work that belongs to no request and no call.

Today that is the event relay: every process writes its events to the PostgreSQL outbox, and
this process relays what others leave there (the API has no relay of its own; a controller
that died before relaying leaves rows behind) to RabbitMQ. Several relays are safe: rows are
claimed with ``FOR UPDATE SKIP LOCKED``. The media pipeline (recording → transcription →
sentiment) will run here when it lands.
"""
from __future__ import annotations

import signal

import click


@click.command("workers")
def workers() -> None:
    """Relay the event outbox to RabbitMQ and announce the service on the bus."""
    import gevent

    from app.calls.heartbeat import ServiceHeartbeat
    from app.events.publisher import start_publisher, stop_publisher

    from app.logging_setup import configure_logging


    configure_logging()
    start_publisher()
    heartbeat = ServiceHeartbeat("workers").start()
    stopping = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stopping.set)
    gevent.signal_handler(signal.SIGINT, stopping.set)
    stopping.wait()
    heartbeat.stop()
    stop_publisher()
