"""Creating, listing and cancelling queue callbacks.

Cancelling keeps the row (``status = 'cancelled'``) so reporting still sees the request; the
dispatcher only ever picks ``pending`` rows. A callback being dialled cannot be cancelled (409
``callback_in_progress``); a finished one (completed/failed) neither (409 ``callback_finished``).
Cancelling a cancelled callback is a no-op. Rescheduling (``scheduled_at``, ``priority``) is for
a ``pending`` callback only, with the same two 409s, and ``callback_cancelled`` for a cancelled
one: the dispatcher never picks it again, so a new time would be a promise nobody keeps.
"""
from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import and_, literal, or_, select, tuple_, update
from sqlalchemy.orm import Session

from app.api.pagination import Page, clamp_limit, decode_cursor, encode_cursor
from app.errors import Conflict, NotFound
from app.models.contact_center import Callback, Queue

DISPATCH_ORDER = (Callback.priority.desc(), Callback.requested_at.asc(), Callback.id)


def require_queue(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID) -> Queue:
    """The queue, if it is the caller's (RLS hides others'; the explicit filter is the second wall)."""
    queue = db.scalar(select(Queue).where(Queue.id == queue_id, Queue.account_id == account_id))
    if queue is None:
        raise NotFound("No such queue.", code="queue_not_found")
    return queue


def create_callback(
    db: Session, account_id: uuid.UUID, queue_id: uuid.UUID, created_by: uuid.UUID, *,
    phone_number: str, priority: int, requested_at: datetime | None, notes: str | None,
    scheduled_at: datetime | None = None,
) -> Callback:
    require_queue(db, account_id, queue_id)
    row = Callback(
        id=uuid.uuid4(), account_id=account_id, queue_id=queue_id, phone_number=phone_number,
        priority=priority, notes=notes, created_by=created_by, scheduled_at=scheduled_at,
    )
    if requested_at is not None:
        row.requested_at = requested_at
    db.add(row)
    db.flush()
    db.refresh(row)
    return row


def list_callbacks(
    db: Session, account_id: uuid.UUID, queue_id: uuid.UUID, *,
    status: str | None, limit: int, offset: int,
) -> list[Callback]:
    """In dispatch order: priority descending, then requested_at ascending."""
    require_queue(db, account_id, queue_id)
    query = select(Callback).where(Callback.account_id == account_id, Callback.queue_id == queue_id)
    if status is not None:
        query = query.where(Callback.status == status)
    return list(db.scalars(query.order_by(*DISPATCH_ORDER).limit(limit).offset(offset)))


_CURSOR_COLUMNS = (Callback.priority, Callback.requested_at, Callback.id)


def callback_page(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID, *,
                  status: str | None, cursor: str | None, limit: int) -> Page[Callback]:
    """The ``envelope=true`` form: dispatch order in keyset pages. The order mixes directions
    (priority descending, then requested_at and id ascending), so the position test is spelled
    out instead of one row comparison."""
    require_queue(db, account_id, queue_id)
    query = select(Callback).where(Callback.account_id == account_id, Callback.queue_id == queue_id)
    if status is not None:
        query = query.where(Callback.status == status)
    if cursor:
        priority, requested_at, last_id = decode_cursor(cursor, _CURSOR_COLUMNS)
        query = query.where(or_(
            Callback.priority < priority,
            and_(Callback.priority == priority,
                 tuple_(Callback.requested_at, Callback.id) > tuple_(literal(requested_at, Callback.requested_at.type),
                                                                     literal(last_id, Callback.id.type)))))
    size = clamp_limit(limit)
    rows = list(db.scalars(query.order_by(*DISPATCH_ORDER).limit(size + 1)))
    next_cursor = None
    if len(rows) > size:
        rows = rows[:size]
        last = rows[-1]
        next_cursor = encode_cursor([last.priority, last.requested_at, last.id])
    return Page(items=rows, next_cursor=next_cursor)


def get_callback(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID, callback_id: uuid.UUID,
                 *, for_update: bool = False) -> Callback:
    require_queue(db, account_id, queue_id)
    query = select(Callback).where(
        Callback.id == callback_id, Callback.queue_id == queue_id, Callback.account_id == account_id
    )
    row = db.scalar(query.with_for_update() if for_update else query)
    if row is None:
        raise NotFound("No such callback in this queue.", code="callback_not_found")
    return row


def cancel_callback(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID, callback_id: uuid.UUID) -> Callback:
    row = get_callback(db, account_id, queue_id, callback_id, for_update=True)
    _refuse_unless_pending(row, "cancelled")
    row.status = "cancelled"
    return row


def _refuse_unless_pending(row: Callback, verb: str) -> None:
    if row.status == "dialing":
        raise Conflict(f"The callback is being dialled; it cannot be {verb} now.",
                       code="callback_in_progress")
    if row.status in ("completed", "failed"):
        raise Conflict(f"The callback already {row.status}.", code="callback_finished")


def reschedule_callback(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID,
                        callback_id: uuid.UUID, changes: dict) -> Callback:
    """Set ``scheduled_at`` (null: now) and/or ``priority`` of a pending callback. The row is
    locked as the dispatcher locks it, so a callback being picked waits for, or skips, this."""
    row = get_callback(db, account_id, queue_id, callback_id, for_update=True)
    _refuse_unless_pending(row, "rescheduled")
    if row.status == "cancelled":
        raise Conflict("The callback was cancelled; request a new one.", code="callback_cancelled")
    if "scheduled_at" in changes:
        row.scheduled_at = changes["scheduled_at"]
    if "priority" in changes:
        row.priority = changes["priority"]
    db.flush()
    db.refresh(row)
    return row


def cancel_pending(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID) -> int:
    """Cancel every pending callback of the queue (rows being dialled are left alone)."""
    require_queue(db, account_id, queue_id)
    result = db.execute(
        update(Callback)
        .where(Callback.account_id == account_id, Callback.queue_id == queue_id,
               Callback.status == "pending")
        .values(status="cancelled")
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount or 0)
