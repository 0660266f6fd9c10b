"""Internal events on RabbitMQ's durable topic exchanges, through a PostgreSQL outbox.

Producers call ``publish`` (own transaction) or ``publish_in`` (inside theirs); the process's
``OutboxPublisher`` relays rows to the broker. See docs/events.md.
"""
from app.events.outbox import publish, publish_in

__all__ = ["publish", "publish_in"]
