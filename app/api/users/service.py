"""User rules: unique usernames per account, bcrypt hashes, and an admin cannot lock
themself out (delete, deactivate or demote their own user)."""
from __future__ import annotations

import uuid
from typing import Any, Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.passwords import hash_password
from app.api.common import apply, flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.errors import Conflict
from app.models import User

FIELDS = ("username", "role", "permissions", "email", "is_active")
TAKEN = "A user with this username already exists."


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> User:
    row = User(id=uuid.uuid4(), account_id=account_id, password_hash=hash_password(data["password"]))
    values = dict(data)
    if "permissions" in values:
        values["permissions"] = list(dict.fromkeys(values["permissions"]))
    apply(row, values, FIELDS)
    db.add(row)
    flush_or_raise(db, conflict=TAKEN, conflict_code="username_taken")
    db.refresh(row)
    return row


def get(db: Session, account_id: uuid.UUID, user_id: uuid.UUID) -> User:
    return get_owned(db, User, user_id, account_id, what="user")


def ends_sessions(row: User, data: dict[str, Any]) -> bool:
    """A new password or another role signs the user out everywhere (docs/api.md "Sessions and
    revocation"): whoever held the old password, or a token minted for the old role, is out."""
    return "password" in data or ("role" in data and data["role"] != row.role)


def update(db: Session, account_id: uuid.UUID, acting_user: uuid.UUID, user_id: uuid.UUID,
           data: dict[str, Any], *, before_commit: Callable[[uuid.UUID], None] | None = None) -> User:
    """``before_commit(user_id)`` runs when the change ends the user's sessions
    (``ends_sessions``), after the checks and before the commit: when it cannot (Redis down),
    nothing is saved."""
    row = get_owned(db, User, user_id, account_id, what="user", for_update=True)
    ending = ends_sessions(row, data)
    if row.id == acting_user and (data.get("is_active") is False or data.get("role", row.role) != row.role):
        raise Conflict("You cannot deactivate or demote yourself.", code="cannot_change_self")
    values = dict(data)
    if "permissions" in values:
        values["permissions"] = list(dict.fromkeys(values["permissions"]))
    apply(row, values, FIELDS)
    if "password" in data:
        row.password_hash = hash_password(data["password"])
    flush_or_raise(db, conflict=TAKEN, conflict_code="username_taken")
    if ending and before_commit is not None:
        before_commit(row.id)
    return row


def get_for_update(db: Session, account_id: uuid.UUID, user_id: uuid.UUID) -> User:
    return get_owned(db, User, user_id, account_id, what="user", for_update=True)


def delete(db: Session, account_id: uuid.UUID, acting_user: uuid.UUID, user_id: uuid.UUID) -> None:
    row = get_owned(db, User, user_id, account_id, what="user", for_update=True)
    if row.id == acting_user:
        raise Conflict("You cannot delete yourself.", code="cannot_change_self")
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int) -> Page[User]:
    stmt = select(User).where(User.account_id == account_id)
    return keyset_page(db, stmt, [User.username, User.id], cursor=cursor, limit=limit)
