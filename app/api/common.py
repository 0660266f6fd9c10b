"""Shared pieces of the management resources (applications, numbers, trunks, LCR, queues, ...).

* ``require_admin`` — configuration changes are an administrator's job: the caller must be an
  ``admin`` user acting in an admin session (an admin who exchanged into an agent session is
  refused, like any agent or supervisor). The spec names only three fine-grained permissions;
  management is guarded by role, so no new permission strings are invented.
* ``require_supervisor`` — running the queues' day (reading the queues, rescheduling and
  cancelling their callbacks) is also a supervisor's: the caller's role must be ``admin`` or
  ``supervisor``, in any session (the roles that may supervise any call of the account).
* ``get_owned`` — one lookup that filters on ``account_id`` explicitly *and* runs under RLS, and
  answers 404 for anything not the caller's (another tenant's id is indistinguishable from a
  missing one: nothing leaks).
* ``flush_or_raise`` — database constraint violations become the API's error shape (409 for
  uniqueness, 422 for references and checks) instead of 500s.
* list query / page schemas for keyset pagination (``app.api.pagination``).
"""
from __future__ import annotations

import functools
import uuid
from typing import Any, Callable, TypeVar

import marshmallow as ma
from marshmallow import validate
from sqlalchemy import JSON, null, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.api.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from app.api.security import SUPERUSER_ROLE, current_identity
from app.errors import Conflict, Forbidden, NotFound, ValidationFailed

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M")

# PostgreSQL SQLSTATEs we translate (everything else stays a 500: it is a bug, not input).
_UNIQUE_VIOLATION = "23505"
_FOREIGN_KEY_VIOLATION = "23503"
_CHECK_VIOLATION = "23514"


def require_admin(view: F) -> F:
    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        me = current_identity()
        if me.role != SUPERUSER_ROLE or me.session != "admin":
            raise Forbidden("An administrator session is required.", code="admin_required")
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


SUPERVISOR_ROLES = frozenset({SUPERUSER_ROLE, "supervisor"})


def require_supervisor(view: F) -> F:
    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_identity().role not in SUPERVISOR_ROLES:
            raise Forbidden("An administrator or a supervisor is required.",
                            code="supervisor_required", details={"roles": sorted(SUPERVISOR_ROLES)})
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def get_owned(db: Session, model: type[M], object_id: uuid.UUID, account_id: uuid.UUID,
              *, what: str, for_update: bool = False) -> M:
    """The caller's row ``object_id`` of ``model`` or 404 ``<what>_not_found``."""
    stmt = select(model).where(model.id == object_id, model.account_id == account_id)  # type: ignore[attr-defined]
    if for_update:
        stmt = stmt.with_for_update()
    row = db.scalar(stmt)
    if row is None:
        raise NotFound(f"No such {what.replace('_', ' ')}.", code=f"{what}_not_found")
    return row


def flush_or_raise(db: Session, *, conflict: str, conflict_code: str = "conflict") -> None:
    """Flush pending changes; map constraint violations to 409/422 with a readable message."""
    try:
        db.flush()
    except IntegrityError as exc:
        pgcode = getattr(exc.orig, "pgcode", None)
        if pgcode == _UNIQUE_VIOLATION:
            raise Conflict(conflict, code=conflict_code) from None
        if pgcode == _FOREIGN_KEY_VIOLATION:
            raise ValidationFailed(
                "A referenced resource does not exist or is not yours.", code="invalid_reference"
            ) from None
        if pgcode == _CHECK_VIOLATION:
            raise ValidationFailed("A value is out of its allowed range.", code="validation_failed") from None
        raise


def apply(row: Any, data: dict[str, Any], fields: tuple[str, ...]) -> None:
    """Copy the given ``fields`` present in ``data`` onto ``row`` (PATCH semantics).

    ``None`` on a JSON column becomes SQL NULL (SQLAlchemy would otherwise store JSON ``null``,
    which the schema's "is an array" checks rightly refuse)."""
    columns = row.__table__.c
    for name in fields:
        if name in data:
            value = data[name]
            if value is None and isinstance(columns[name].type, JSON):
                value = null()
            setattr(row, name, value)


class ListQuerySchema(ma.Schema):
    limit = ma.fields.Integer(
        load_default=DEFAULT_PAGE_SIZE, validate=validate.Range(min=1, max=MAX_PAGE_SIZE),
        metadata={"description": f"Page size, 1-{MAX_PAGE_SIZE}"},
    )
    cursor = ma.fields.String(
        load_default=None, validate=validate.Length(max=512),
        metadata={"description": "next_cursor of the previous page"},
    )


_PAGE_SCHEMAS: dict[type, type[ma.Schema]] = {}


def page_schema(item: type[ma.Schema]) -> type[ma.Schema]:
    """``{"items": [item...], "next_cursor": str|null}`` schema for ``item`` (one class per item)."""
    cached = _PAGE_SCHEMAS.get(item)
    if cached is None:
        name = item.__name__.replace("Schema", "") + "PageSchema"
        cached = ma.Schema.from_dict(
            {
                "items": ma.fields.List(ma.fields.Nested(item)),
                "next_cursor": ma.fields.String(allow_none=True),
            },
            name=name,
        )
        _PAGE_SCHEMAS[item] = cached
    return cached
