"""The tenant's own account row, read under RLS; the limit lowered through the database's
``lower_own_account_limit`` (migration 0003), the API role's only write on ``accounts``."""
from __future__ import annotations

import uuid

from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.errors import Forbidden, NotFound
from app.models import Account

_INSUFFICIENT_PRIVILEGE = "42501"


def get(db: Session, account_id: uuid.UUID) -> Account:
    account = db.scalar(select(Account).where(Account.id == account_id))
    if account is None:  # cannot happen after authentication; kept as a 404, never a 500
        raise NotFound("Account not found.", code="account_not_found")
    return account


def lower_limit(db: Session, account_id: uuid.UUID, new_limit: int) -> Account:
    """Checked here for a clear answer, and again by the database function (the rule's home)."""
    account = get(db, account_id)
    current = account.max_concurrent_calls
    if current != 0 and (new_limit == 0 or new_limit > current):
        raise Forbidden(
            f"The concurrency limit is {current}; a tenant may only lower it. Ask your provider to "
            "raise it.", code="limit_raise_forbidden",
            details={"max_concurrent_calls": current})
    try:
        db.execute(text("SELECT lower_own_account_limit(:limit)"), {"limit": new_limit})
    except DBAPIError as exc:
        if getattr(exc.orig, "pgcode", None) == _INSUFFICIENT_PRIVILEGE:
            raise Forbidden("Only your provider can raise the concurrency limit.",
                            code="limit_raise_forbidden") from None
        raise
    db.expire(account)
    return get(db, account_id)


def set_mfa_required(db: Session, account_id: uuid.UUID, required: bool) -> Account:
    """Through the database's ``set_own_account_mfa_required`` (migration 0010): the API role
    has no UPDATE on ``accounts``."""
    account = get(db, account_id)
    db.execute(text("SELECT set_own_account_mfa_required(:required)"), {"required": required})
    db.expire(account)
    return get(db, account_id)
