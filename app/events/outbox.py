"""Store-and-forward outbox: events are rows in ``event_outbox`` before they are messages.

Why: a call record and its ``call.ended`` must be atomic (both or neither), and a broker blip
must neither lose events nor block a call. So producers only INSERT a row — inside their own
transaction with ``publish_in`` — and the publisher greenlet (``app.events.publisher``) relays
unpublished rows to RabbitMQ with confirms, marking ``published_at``. The API role has INSERT
only on this table (no SELECT), so inserts never use RETURNING: ids are generated here.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, cast

from sqlalchemy import any_, bindparam, delete, event, insert, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session

from app.db.engine import platform_session
from app.events.envelope import Envelope, make_envelope
from app.events.exchanges import check_routing_key
from app.models import EventOutbox

_wakers: list[Callable[[], None]] = []


def add_waker(fn: Callable[[], None]) -> None:
    """The in-process publisher registers here to be woken when a transaction with events commits."""
    if fn not in _wakers:
        _wakers.append(fn)


def remove_waker(fn: Callable[[], None]) -> None:
    if fn in _wakers:
        _wakers.remove(fn)


def wake_now() -> None:
    """Wake the in-process publisher: for a transaction committed without a Session
    (``app.db.engine.run_as_tenant``), once it has committed."""
    for fn in list(_wakers):
        fn()


_WAKE_KEY = "sbc_outbox_wake"
# PostgreSQL NOTIFY channel of urgent rows: every relay LISTENs on it (app/events/wake_listener.py)
NOTIFY_CHANNEL = "sbc_outbox"
# NOTIFY is transactional: delivered when the transaction commits, dropped when it rolls back
_NOTIFY = text(f"NOTIFY {NOTIFY_CHANNEL}")


def wake_after_commit(session: Session) -> None:
    """Wake the publisher once the caller's transaction commits (not before: the row would
    not be visible yet, and a rolled-back event must never be published)."""
    session.info[_WAKE_KEY] = True


# Registered once for every Session, and acting only on a session flagged above: listening on
# each session instead grew SQLAlchemy's event registry with every transaction that emitted
# (several per call) until the garbage collector freed those sessions.
@event.listens_for(Session, "after_commit")
def _wake_on_commit(session: Session) -> None:
    if session.info.pop(_WAKE_KEY, None):
        wake_now()


@event.listens_for(Session, "after_rollback")
def _forget_on_rollback(session: Session) -> None:
    session.info.pop(_WAKE_KEY, None)


def event_row(
    exchange: str,
    routing_key: str,
    payload: dict[str, Any],
    *,
    account_id: uuid.UUID | str | None = None,
    trace_id: uuid.UUID | str | None = None,
) -> dict[str, Any]:
    """The outbox row of one event. Raises ``UnknownRoutingKey`` for a key not registered on
    ``exchange``."""
    check_routing_key(exchange, routing_key)
    envelope = make_envelope(routing_key, payload, account_id=account_id, trace_id=trace_id)
    return {
        "id": uuid.UUID(envelope.id),
        "exchange": exchange,
        "routing_key": routing_key,
        "body": envelope.to_dict(),
        # client clock, microseconds: orders the rows of one transaction as they were written
        "created_at": datetime.now(timezone.utc),
        "attempts": 0,
    }


# Built once, executed with parameters: the call path writes several outbox rows per call, and
# building the statement per row (ORM bulk insert, ``.values(**row)``, its cache key) cost more
# CPU than the insert itself. Core on the session's connection: same transaction, same SQL.
_OUTBOX = EventOutbox.__table__
# a retried batch whose first commit did land (acknowledgement lost) is not an error
_INSERT_ROWS = pg_insert(_OUTBOX).on_conflict_do_nothing()
_INSERT_ONE = insert(_OUTBOX)


def insert_rows(session: Session, rows: list[dict[str, Any]]) -> None:
    """Queue prepared rows inside the caller's transaction (one statement for many rows);
    they are published only if that transaction commits."""
    if rows:
        session.connection().execute(_INSERT_ROWS, rows)
        wake_after_commit(session)


def publish_in(
    session: Session,
    exchange: str,
    routing_key: str,
    payload: dict[str, Any],
    *,
    account_id: uuid.UUID | str | None = None,
    trace_id: uuid.UUID | str | None = None,
    urgent: bool = False,
) -> uuid.UUID:
    """Queue an event inside the caller's transaction; it is published only if that commits.
    Raises ``UnknownRoutingKey`` for a key not registered on ``exchange``.

    ``urgent``: wake the relays of *other* processes too (a NOTIFY in the same transaction).
    Why: a process that runs no relay (``sbc api``: it may INSERT rows but not read them) would
    otherwise wait for a controller's or worker's next poll (up to 1 s) — an agent's hold or
    hangup must reach the switch at once. The row stays the message: a relay that missed the
    NOTIFY (not listening, reconnecting) still publishes it at its next poll."""
    row = event_row(exchange, routing_key, payload, account_id=account_id, trace_id=trace_id)
    connection = session.connection()
    connection.execute(_INSERT_ONE, row)
    if urgent:
        connection.execute(_NOTIFY)
    wake_after_commit(session)
    return row["id"]


def publish(
    exchange: str,
    routing_key: str,
    payload: dict[str, Any],
    *,
    account_id: uuid.UUID | str | None = None,
    trace_id: uuid.UUID | str | None = None,
) -> uuid.UUID:
    """Queue an event in its own (platform) transaction. Never touches the broker, so it never
    blocks or fails because RabbitMQ is down; the publisher relays it when it can."""
    with platform_session() as session:
        event_id = publish_in(session, exchange, routing_key, payload,
                              account_id=account_id, trace_id=trace_id)
    return event_id


@dataclass(frozen=True)
class OutboxRow:
    id: uuid.UUID
    exchange: str
    routing_key: str
    body: dict[str, Any]
    attempts: int

    def envelope(self) -> Envelope:
        return Envelope.from_dict(self.body)


# The relay's two statements per batch, built once like the inserts above.
_CLAIM = (select(_OUTBOX.c.id, _OUTBOX.c.exchange, _OUTBOX.c.routing_key, _OUTBOX.c.body,
                 _OUTBOX.c.attempts)
          .where(_OUTBOX.c.published_at.is_(None))
          .order_by(_OUTBOX.c.created_at, _OUTBOX.c.id)
          .limit(bindparam("limit"))
          .with_for_update(skip_locked=True))
_MARK_PUBLISHED = (update(_OUTBOX)
                   .where(_OUTBOX.c.id == any_(bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True)))))
                   .values(published_at=text("clock_timestamp()"), attempts=_OUTBOX.c.attempts + 1))


def claim_batch(session: Session, limit: int) -> list[OutboxRow]:
    """Oldest unpublished rows, locked for this transaction; SKIP LOCKED lets several publisher
    processes share the table without publishing the same row concurrently."""
    rows = session.connection().execute(_CLAIM, {"limit": limit}).all()
    return [OutboxRow(r.id, r.exchange, r.routing_key, r.body, r.attempts) for r in rows]


def mark_published(session: Session, ids: list[uuid.UUID]) -> None:
    if ids:
        session.connection().execute(_MARK_PUBLISHED, {"ids": ids})


def mark_failed(session: Session, event_id: uuid.UUID, error: str) -> None:
    session.execute(
        update(EventOutbox).where(EventOutbox.id == event_id)
        .values(attempts=EventOutbox.attempts + 1, last_error=error[:1000])
    )


def mark_unpublishable(session: Session, event_id: uuid.UUID, error: str) -> None:
    """Take a malformed row out of the queue (published_at set) and say why in last_error."""
    session.execute(
        update(EventOutbox).where(EventOutbox.id == event_id)
        .values(published_at=text("clock_timestamp()"), attempts=EventOutbox.attempts + 1,
                last_error=("unpublishable: " + error)[:1000])
    )


def prune(session: Session, older_than_seconds: float) -> int:
    """Delete published rows older than the retention; unpublished rows are never pruned."""
    cutoff = datetime.now(timezone.utc) - timedelta(seconds=older_than_seconds)
    # a DELETE's result is a CursorResult (rowcount); Session.execute is typed as Result
    result = cast("CursorResult[Any]", session.execute(
        delete(EventOutbox).where(EventOutbox.published_at.is_not(None),
                                  EventOutbox.published_at < cutoff)
    ))
    return result.rowcount or 0


def pending_count(session: Session) -> int:
    return session.execute(
        select(text("count(*)")).select_from(EventOutbox).where(EventOutbox.published_at.is_(None))
    ).scalar_one()
