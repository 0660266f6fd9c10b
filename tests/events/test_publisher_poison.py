"""A malformed outbox row must not block the events queued behind it."""
from __future__ import annotations

import uuid

from sqlalchemy import delete

from app.db.engine import platform_session
from app.events import publish
from app.events.exchanges import SYSTEM_EVENTS
from app.events.publisher import OutboxPublisher
from app.models import EventOutbox


def test_given_row_that_is_not_an_envelope_when_relaying_then_it_is_set_aside_and_later_rows_flow(
        amqp_vhost):
    bad_id = uuid.uuid4()
    with platform_session() as s:
        s.add(EventOutbox(id=bad_id, exchange=SYSTEM_EVENTS, routing_key="system.config.changed",
                          body={"not": "an envelope"}))
    good_id = publish(SYSTEM_EVENTS, "system.config.changed", {"keys": ["x"]})
    publisher = OutboxPublisher().start()
    try:
        assert publisher.flush(timeout=10)
        with platform_session() as s:
            bad, good = s.get(EventOutbox, bad_id), s.get(EventOutbox, good_id)
            assert good.published_at is not None and good.last_error is None
            assert bad.published_at is not None
            assert bad.last_error.startswith("unpublishable: not an event envelope")
    finally:
        publisher.stop()
        with platform_session() as s:
            s.execute(delete(EventOutbox).where(EventOutbox.id.in_([bad_id, good_id])))
