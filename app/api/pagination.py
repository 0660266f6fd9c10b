"""Keyset (cursor) pagination for every list endpoint.

Offsets drift when rows are inserted between two page reads and cost O(offset) in
PostgreSQL; a keyset cursor — the sort key of the last row returned — does neither.  The cursor
is opaque to clients (base64url of JSON) and is decoded back into typed values using the
Python type of each key column, so a forged cursor cannot smuggle anything into SQL: it is
only ever a bound parameter of the right type, or a 400 ``invalid_cursor``.
"""
from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import uuid
from dataclasses import dataclass
from functools import wraps
from typing import Any, Callable, Generic, Sequence, TypeVar

from flask import request
from sqlalchemy import Select, literal, tuple_
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from app.api import json_body
from app.api.fields import to_utc
from app.errors import BadRequest, SbcError

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200

T = TypeVar("T")


class InvalidCursor(BadRequest):
    code = "invalid_cursor"


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None

    def to_dict(self, items: list[Any]) -> dict[str, Any]:
        return {"items": items, "next_cursor": self.next_cursor}


def _to_json(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _python_type(column: ColumnElement[Any]) -> type | None:
    try:
        return column.type.python_type
    except NotImplementedError:  # SQLAlchemy's answer for types with no Python equivalent
        return None


def _from_json(value: Any, column: ColumnElement[Any]) -> Any:
    if value is None:
        raise InvalidCursor("cursor is not valid for this list")
    kind = _python_type(column)
    try:
        if kind is dt.datetime:  # in UTC: PostgreSQL refuses offsets Python takes (+16:00)
            return to_utc(dt.datetime.fromisoformat(value))
        if kind is dt.date:
            return dt.date.fromisoformat(value)
        if kind is uuid.UUID:
            return uuid.UUID(value)
        if kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(value)
            return value
        if kind is str:
            if not isinstance(value, str):
                raise ValueError(value)
            return value
    except (TypeError, ValueError, AttributeError) as exc:  # uuid.UUID(1) is an AttributeError
        raise InvalidCursor("cursor is not valid for this list") from exc
    return value


def encode_cursor(values: Sequence[Any]) -> str:
    raw = json.dumps([_to_json(v) for v in values], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, columns: Sequence[ColumnElement[Any]]) -> list[Any]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        raw = base64.urlsafe_b64decode(padded.encode())
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursor("cursor is not valid") from exc
    try:  # the API's strict decoder: no surrogates, NUL, deep nesting or out-of-range numbers
        values = json_body.loads(raw, where="cursor")
    except SbcError as exc:
        raise InvalidCursor("cursor is not valid") from exc
    if not isinstance(values, list) or len(values) != len(columns):
        raise InvalidCursor("cursor is not valid for this list")
    return [_from_json(v, c) for v, c in zip(values, columns)]


def unpaged(view: Callable[..., Any]) -> Callable[..., Any]:
    """For a list answered as one plain array (sub-items, never paged): a ``cursor`` is refused
    (400 ``invalid_cursor``) as on every paged list. Ignored, it answered the whole list to a
    client that believed it was reading a later page."""
    @wraps(view)
    def refusing_cursor(*args: Any, **kwargs: Any) -> Any:
        if "cursor" in request.args:
            raise InvalidCursor("This list is not paged (it returns every item at once): send no cursor.")
        return view(*args, **kwargs)
    return refusing_cursor


def clamp_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_PAGE_SIZE
    return max(1, min(int(limit), MAX_PAGE_SIZE))


def keyset_page(
    session: Session,
    stmt: Select[Any],
    key_columns: Sequence[ColumnElement[Any]],
    *,
    cursor: str | None,
    limit: int | None,
    descending: bool = False,
) -> Page[Any]:
    """Run ``stmt`` (selecting one ORM entity) ordered by ``key_columns`` after ``cursor``.

    ``key_columns`` must end with a unique column (the primary key) so the order is total.
    """
    size = clamp_limit(limit)
    keys = tuple_(*key_columns)
    if cursor:
        values = decode_cursor(cursor, key_columns)
        after = [literal(v, type_=c.type) for v, c in zip(values, key_columns)]
        stmt = stmt.where(keys < tuple_(*after) if descending else keys > tuple_(*after))
    order = [c.desc() if descending else c.asc() for c in key_columns]
    rows = list(session.scalars(stmt.order_by(*order).limit(size + 1)))
    more = len(rows) > size
    rows = rows[:size]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = encode_cursor([getattr(last, c.key) for c in key_columns])
    return Page(items=rows, next_cursor=next_cursor)
