"""Login, refresh and session exchange — the rules, without HTTP.

Login runs before any tenant is known, so it reads ``accounts`` and ``users`` through
``platform_session`` (the explicit cross-tenant path), filtered by the Host's subdomain. It takes
the same time whether or not the tenant or the user exists: a bcrypt comparison always happens
(against a dummy hash when there is no user), and every failure is the same 401
``invalid_credentials``.

Sessions: ``admin`` is open to roles ``admin`` and ``supervisor``; ``agent`` is open to role
``agent`` and to any user who has an ``agents`` row (an admin who also takes calls). ``exchange``
trades a valid token for the other session of the same user when that session is open to them.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

import bcrypt
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.api.auth.tokens import SESSIONS, IssuedToken, issue_token
from app.api.security import Identity, effective_permissions
from app.db.engine import platform_session, tenant_session
from app.errors import Forbidden, Unauthorized
from app.models.contact_center import Agent
from app.models.tenancy import Account
from app.models.users import User

ADMIN_SESSION_ROLES = frozenset({"admin", "supervisor"})
BCRYPT_MAX_BYTES = 72  # bcrypt ignores (bcrypt>=5: rejects) longer input

# Compared against when the user does not exist, so a miss costs one bcrypt check like a hit.
# Cost 12 = bcrypt's default, the cost real hashes are created with.
_DUMMY_HASH = bcrypt.hashpw(b"not-a-real-password", bcrypt.gensalt(rounds=12))


@dataclass(frozen=True)
class Grant:
    """A successful login/refresh/exchange: the token and who it is for."""

    issued: IssuedToken
    user: User
    account: Account
    permissions: frozenset[str]


def _password_matches(password: str, password_hash: bytes) -> bool:
    candidate = password.encode("utf-8")
    too_long = len(candidate) > BCRYPT_MAX_BYTES
    try:
        ok = bcrypt.checkpw(candidate[:BCRYPT_MAX_BYTES], password_hash)
    except ValueError:  # malformed stored hash: treat as a mismatch, never as a crash
        return False
    return ok and not too_long


def allowed_sessions(user: User, is_agent: bool) -> tuple[str, ...]:
    allowed = []
    if user.role in ADMIN_SESSION_ROLES:
        allowed.append("admin")
    if user.role == "agent" or is_agent:
        allowed.append("agent")
    return tuple(allowed)


def _is_agent(db: Session, user_id: uuid.UUID) -> bool:
    return bool(db.scalar(select(exists().where(Agent.user_id == user_id))))


def _grant(user: User, account: Account, session: str) -> Grant:
    issued = issue_token(
        user_id=user.id, account_id=account.id, tenant=account.subdomain, role=user.role,
        session=session,
    )
    return Grant(issued, user, account, effective_permissions(user.role, session, user.permissions))


def login(subdomain: str, username: str, password: str, session: str | None) -> Grant:
    with platform_session() as db:
        row = db.execute(
            select(User, Account)
            .join(Account, Account.id == User.account_id)
            .where(Account.subdomain == subdomain, User.username == username)
        ).first()
        is_agent = _is_agent(db, row.User.id) if row is not None else False
    stored = row.User.password_hash.encode("utf-8") if row is not None else _DUMMY_HASH
    matches = _password_matches(password, stored)
    if row is None or not matches or not row.User.is_active:
        raise Unauthorized("Invalid username or password.", code="invalid_credentials")
    user, account = row.User, row.Account
    allowed = allowed_sessions(user, is_agent)
    if not allowed or (session is not None and session not in allowed):
        raise Forbidden(
            f"This user cannot open a '{session or 'admin'}' session.", code="session_not_allowed",
            details={"allowed_sessions": list(allowed)},
        )
    chosen = session or allowed[0]
    return _grant(user, account, chosen)


def load_user_and_account(db: Session, account_id: uuid.UUID, user_id: uuid.UUID) -> tuple[User, Account] | None:
    """Both rows under the caller's RLS scope; None when the user is gone or deactivated."""
    row = db.execute(
        select(User, Account)
        .join(Account, Account.id == User.account_id)
        .where(User.id == user_id, User.account_id == account_id, User.is_active.is_(True))
    ).first()
    return (row.User, row.Account) if row is not None else None


def reissue(identity: Identity, session: str | None = None, *, exchange: bool = False) -> Grant:
    """Refresh (same session) or exchange (the other session, or the one asked for)."""
    with tenant_session(identity.account_id) as db:
        found = load_user_and_account(db, identity.account_id, identity.user_id)
        if found is None:
            raise Unauthorized("The token's user no longer exists.", code="invalid_token")
        user, account = found
        allowed = allowed_sessions(user, _is_agent(db, user.id))
    if exchange:
        target = session or next((s for s in SESSIONS if s != identity.session), identity.session)
        if target not in allowed:
            raise Forbidden(
                f"This user has no {target} session to exchange into.", code="exchange_not_allowed",
                details={"allowed_sessions": list(allowed)},
            )
    else:
        target = identity.session
        if target not in allowed:
            raise Forbidden(
                f"This user can no longer open a {target} session.", code="session_not_allowed",
                details={"allowed_sessions": list(allowed)},
            )
    return _grant(user, account, target)
