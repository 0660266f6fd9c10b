"""The outbox keeps each event once: a batch written again (its first commit landed but the
acknowledgement was lost, so the event writer retried) adds nothing and raises nothing."""
from __future__ import annotations

import uuid

from sqlalchemy import text

from app.db.engine import platform_session
from app.events import outbox
from app.events.exchanges import SYSTEM_EVENTS


def test_given_rows_already_in_the_outbox_when_the_same_batch_is_inserted_again_then_each_is_kept_once(owner_conn):
    marker = str(uuid.uuid4())
    rows = [outbox.event_row(SYSTEM_EVENTS, "system.config.changed", {"keys": [marker, str(n)]})
            for n in range(3)]
    for _ in range(2):
        with platform_session() as session:
            outbox.insert_rows(session, rows)

    count = owner_conn.execute(text(
        "SELECT count(*) FROM event_outbox WHERE body->'payload'->'keys'->>0 = :m"), {"m": marker}).scalar()
    assert count == 3
