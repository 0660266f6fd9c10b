"""Loading a signed-in user with their account: shared by token checks and token reissue.

It lives here, not in the API's auth service, so request security (app/api/security.py) and
the auth service both use it without importing each other.
"""
from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models.tenancy import Account
from app.models.users import User


def load_user_and_account(db: Session, account_id: uuid.UUID,
                          user_id: uuid.UUID) -> tuple[User, Account] | None:
    """Both rows under the caller's RLS scope; None when the user is gone or deactivated."""
    row = db.execute(
        select(User, Account)
        .join(Account, Account.id == User.account_id)
        .where(User.id == user_id, User.account_id == account_id, User.is_active.is_(True))
    ).first()
    return (row.User, row.Account) if row is not None else None
