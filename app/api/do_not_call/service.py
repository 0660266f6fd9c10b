"""Do-not-call entries: E.164-checked, all or nothing per request; adding a number that is
already listed is not an error (the list is a set), it is simply not counted."""
from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from app.api.pagination import Page, keyset_page
from app.campaigns import numbers
from app.campaigns.contacts import RowError, rejected
from app.errors import NotFound
from app.models import DoNotCall


def add(db: Session, account_id: uuid.UUID, items: list[tuple[int, dict[str, Any]]], *, source: str) -> int:
    errors: list[RowError] = []
    values: dict[str, str | None] = {}
    for row, item in items:
        try:
            digits = numbers.parse(str(item.get("number") or "")).digits
        except numbers.InvalidContactNumber as exc:
            errors.append(RowError(row, "number", str(exc)))
            continue
        reason = item.get("reason") or None
        if reason is not None and len(reason) > 255:
            errors.append(RowError(row, "reason", "Longer than 255 characters."))
        values.setdefault(digits, reason)
    if errors:
        raise rejected(errors, source)
    stmt = insert(DoNotCall).values([{"id": uuid.uuid4(), "account_id": account_id, "number": n, "reason": r}
                                     for n, r in values.items()])
    result = db.execute(stmt.on_conflict_do_nothing(index_elements=["account_id", "number"]).returning(DoNotCall.id))
    return len(result.all())


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[DoNotCall]:
    stmt = select(DoNotCall).where(DoNotCall.account_id == account_id)
    return keyset_page(db, stmt, [DoNotCall.created_at, DoNotCall.id], cursor=cursor, limit=limit)


def remove(db: Session, account_id: uuid.UUID, number: str) -> None:
    row = db.scalar(select(DoNotCall).where(DoNotCall.account_id == account_id,
                                            DoNotCall.number == number.lstrip("+")))
    if row is None:
        raise NotFound("This number is not on the do-not-call list.", code="dnc_number_not_found")
    db.delete(row)
    db.flush()
