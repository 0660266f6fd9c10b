"""Queue rules: unique names per account, SSRF-guarded timeout hook, hold music that exists."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.config import get_config
from app.media import moh, moh_uploads
from app.models import Queue
from app.webhooks.url_guard import check_url_on_save

FIELDS = ("name", "moh", "max_wait_seconds", "announce_position", "announce_interval_seconds", "timeout_hook_url",
          "offer_timeout_seconds", "max_missed_offers", "wrap_up_seconds", "strategy", "short_abandon_seconds",
          "service_level_seconds")
NAME_TAKEN = "A queue with this name already exists."


def _validate(account_id: uuid.UUID, data: dict[str, Any]) -> None:
    if data.get("timeout_hook_url"):
        check_url_on_save(data["timeout_hook_url"])
    if "moh" in data:
        with moh_uploads.storage_errors():
            moh.require_known(get_config().moh_dir, str(account_id), data["moh"])


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> Queue:
    _validate(account_id, data)
    row = Queue(id=uuid.uuid4(), account_id=account_id)
    apply(row, data, FIELDS)
    db.add(row)
    flush_or_raise(db, conflict=NAME_TAKEN, conflict_code="queue_name_taken")
    db.refresh(row)
    return row


def get(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID) -> Queue:
    return get_owned(db, Queue, queue_id, account_id, what="queue")


def update(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID, data: dict[str, Any]) -> Queue:
    row = get_owned(db, Queue, queue_id, account_id, what="queue", for_update=True)
    _validate(account_id, data)
    apply(row, data, FIELDS)
    flush_or_raise(db, conflict=NAME_TAKEN, conflict_code="queue_name_taken")
    return row


def delete(db: Session, account_id: uuid.UUID, queue_id: uuid.UUID) -> None:
    """Memberships and callbacks go with the queue (cascade); call records keep its id."""
    row = get_owned(db, Queue, queue_id, account_id, what="queue", for_update=True)
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[Queue]:
    stmt = select(Queue).where(Queue.account_id == account_id)
    return keyset_page(db, stmt, [Queue.name, Queue.id], cursor=cursor, limit=limit)


def names_playing(db: Session, account_id: uuid.UUID, moh_name: str) -> list[str]:
    """The account's queues whose ``moh`` is ``moh_name`` (an upload they would lose)."""
    stmt = select(Queue.name).where(Queue.account_id == account_id, Queue.moh == moh_name).order_by(Queue.name)
    return list(db.scalars(stmt))
