"""Login, refresh and session exchange — the rules, without HTTP.

Login runs before any tenant is known. The API role resolves the Host's subdomain to an account
id through the SECURITY DEFINER function ``account_id_for_subdomain`` (the only cross-tenant fact
it can learn), then reads the user under ``tenant_session`` like any request — no BYPASSRLS role
is involved. It takes the same time whether or not the tenant or the user exists: a bcrypt comparison always happens
(against a dummy hash when there is no user), and every failure is the same 401
``invalid_credentials``. Before any of that, ``app.accounts.login_throttle`` counts failures per
(tenant, username, client address) with growing delays, per client address, and per user
across addresses except from the user's known addresses; while one of them says wait the answer
is 429 ``too_many_login_attempts`` without a lookup or a bcrypt check.

Second factor (``app.api.auth.mfa``): a user with TOTP gets 401 ``mfa_required`` with a short-lived
challenge token instead of the session; ``login_second_factor`` trades it plus a code for the
session, throttled like the password (its own (tenant, user, address) pair in the same
``LoginThrottle``: a right password must not forgive wrong codes). A user of a tenant that
requires a second factor who has none gets 403 ``mfa_enrolment_required`` with an enrol-only
token (``app.api.auth.challenge``).

Sessions: ``admin`` is open to roles ``admin`` and ``supervisor``; ``agent`` is open to role
``agent`` and to any user who has an ``agents`` row (an admin who also takes calls). ``exchange``
trades a valid token for the other session of the same user when that session is open to them.
"""
from __future__ import annotations

import functools
import secrets
import uuid
from dataclasses import dataclass

import gevent
from sqlalchemy import Row, select, text
from sqlalchemy.orm import Session

from app.accounts.admin import ensure_enabled
from app.accounts.login_throttle import LoginThrottle
from app.accounts.passwords import hash_password, verify_password
from app.accounts.revocation import SessionRevocations
from app.accounts.users import load_user_and_account
from app.api.auth import challenge, mfa
from app.api.auth.tokens import SESSIONS, IssuedToken, issue_token
from app.api.security import Identity, effective_permissions
from app.db.engine import app_engine, tenant_session
from app.errors import Forbidden, Unauthorized
from app.models.contact_center import Agent
from app.models.tenancy import Account
from app.models.users import User

ADMIN_SESSION_ROLES = frozenset({"admin", "supervisor"})

# Compared against when the user does not exist, so a miss costs one bcrypt check like a hit
# (at the cost production hashes are created with).
@functools.lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return hash_password("not-a-real-password-" + secrets.token_hex(8))


@dataclass(frozen=True)
class Grant:
    """A successful login/refresh/exchange: the token and who it is for."""

    issued: IssuedToken
    user: User
    account: Account
    permissions: frozenset[str]
    agent_id: uuid.UUID | None  # the user's agent profile, for the agent SDK


def _verify_off_hub(password: str, stored: str) -> bool:
    """bcrypt is ~250 ms of CPU that releases the GIL: run it on gevent's native thread pool so a
    login does not freeze every other request of the process, and logins use every core."""
    return bool(gevent.get_hub().threadpool.apply(verify_password, (password, stored)))


def allowed_sessions(user: User, agent_id: uuid.UUID | None) -> tuple[str, ...]:
    allowed = []
    if user.role in ADMIN_SESSION_ROLES:
        allowed.append("admin")
    if user.role == "agent" or agent_id is not None:
        allowed.append("agent")
    return tuple(allowed)


def _agent_id(db: Session, user_id: uuid.UUID) -> uuid.UUID | None:
    """The user's agent profile (one per user), if they take calls."""
    return db.scalar(select(Agent.id).where(Agent.user_id == user_id))


def _grant(user: User, account: Account, session: str, agent_id: uuid.UUID | None, *,
           via_sso: bool = False) -> Grant:
    issued = issue_token(
        user_id=user.id, account_id=account.id, tenant=account.subdomain, role=user.role,
        session=session, via_sso=via_sso,
    )
    permissions = effective_permissions(user.role, session, user.permissions)
    return Grant(issued, user, account, permissions, agent_id)


def account_for_subdomain(subdomain: str) -> uuid.UUID | None:
    """The one fact the API role may learn before a tenant is known (SECURITY DEFINER function)."""
    with app_engine().connect() as conn:
        return conn.scalar(text("SELECT account_id_for_subdomain(:s)"), {"s": subdomain})


def login(subdomain: str, username: str, password: str, session: str | None, *,
          throttle: LoginThrottle, address: str | None) -> Grant:
    """Raises TooManyLoginAttempts (before any lookup or bcrypt), Unauthorized, Forbidden."""
    attempt = throttle.begin(subdomain, username, address)
    try:
        row, agent_id = _verified_user(subdomain, username, password)
    except Unauthorized:
        raise  # the attempt's reserved slot stays: it is the failure record
    except BaseException:
        attempt.abandoned()  # nothing was verified (database down, ...): not the caller's failure
        raise
    attempt.succeeded()  # the password is right, even if the session asked for is refused below
    user, account = row.User, row.Account
    ensure_enabled(account)
    allowed = allowed_sessions(user, agent_id)
    if not allowed or (session is not None and session not in allowed):
        raise Forbidden(
            f"This user cannot open a '{session or 'admin'}' session.", code="session_not_allowed",
            details={"allowed_sessions": list(allowed)},
        )
    chosen = session or allowed[0]
    if mfa.is_enrolled(user):
        token, lifetime = challenge.issue(challenge.CHALLENGE, user_id=user.id, account_id=account.id,
                                          tenant=account.subdomain, session=chosen)
        raise Unauthorized(
            "Password accepted; send a code from the authenticator app (or a recovery code) to "
            "POST /auth/login/mfa.", code="mfa_required",
            details={"challenge_token": token, "expires_in": lifetime,
                     "methods": [mfa.METHOD_TOTP, mfa.METHOD_RECOVERY]})
    _require_enrolment_if_needed(user, account, chosen)
    return _grant(user, account, chosen, agent_id)


def _require_enrolment_if_needed(user: User, account: Account, session: str | None, *,
                                 with_token: bool = True) -> None:
    """403 ``mfa_enrolment_required`` when the tenant requires a second factor the user lacks
    (with an enrol-only token at login; refresh and exchange get none: enrol with the session)."""
    if not account.mfa_required or mfa.is_enrolled(user):
        return
    details = None
    if with_token:
        token, lifetime = challenge.issue(challenge.ENROLMENT, user_id=user.id, account_id=account.id,
                                          tenant=account.subdomain, session=session)
        details = {"enrolment_token": token, "expires_in": lifetime}
    raise Forbidden("This account requires a second factor: enrol an authenticator app "
                    "(POST /auth/mfa/totp, then /auth/mfa/totp/confirm).",
                    code="mfa_enrolment_required", details=details)


def login_second_factor(subdomain: str, challenge_token: str, code: str, *, throttle: LoginThrottle,
                        revocations: SessionRevocations, address: str | None, now: float) -> Grant:
    """The second step of a login: the challenge (single use) plus a TOTP or recovery code.
    Raises 401 ``invalid_mfa_challenge`` / ``mfa_challenge_expired`` / ``invalid_mfa_code`` /
    ``mfa_code_reused``, 429 ``too_many_login_attempts``."""
    pending = challenge.read(challenge_token, challenge.CHALLENGE, subdomain)
    _challenge_unused(revocations, pending)
    attempt = throttle.begin(subdomain, f"{pending.user_id}\0totp", address)
    try:
        with tenant_session(pending.account_id) as db:
            found = load_user_and_account(db, pending.account_id, pending.user_id)
            if found is None or not mfa.is_enrolled(found[0]):
                raise Unauthorized("The sign-in challenge is not valid; log in again.",
                                   code="invalid_mfa_challenge")
            user, account = found
            mfa.verify(db, user, code, now)
            agent_id = _agent_id(db, user.id)
    except Unauthorized:
        raise  # the attempt's reserved slot stays: it is the failure record
    except BaseException:
        attempt.abandoned()
        raise
    attempt.succeeded()
    if not revocations.consume_once(pending.claims):
        raise Unauthorized("This sign-in challenge was already used; log in again.",
                           code="invalid_mfa_challenge")
    ensure_enabled(account)
    allowed = allowed_sessions(user, agent_id)
    chosen = pending.session or (allowed[0] if allowed else None)
    if chosen is None or chosen not in allowed:
        raise Forbidden(f"This user cannot open a '{chosen or 'admin'}' session.",
                        code="session_not_allowed", details={"allowed_sessions": list(allowed)})
    return _grant(user, account, chosen, agent_id)


def _challenge_unused(revocations: SessionRevocations, pending: challenge.Restricted) -> None:
    try:
        revocations.check(pending.claims)
    except Unauthorized:
        raise Unauthorized("This sign-in challenge was already used; log in again.",
                           code="invalid_mfa_challenge") from None


def grant_verified(db: Session, user: User, account: Account, session: str | None, *,
                   via_sso: bool = False) -> Grant:
    """The session a user proven another way gets: an enrol-only token once the first code
    confirmed the factor, or a single sign-on (``app.api.sso``, ``via_sso``: no TOTP asked)."""
    ensure_enabled(account)
    agent_id = _agent_id(db, user.id)
    allowed = allowed_sessions(user, agent_id)
    chosen = session or (allowed[0] if allowed else None)
    if chosen is None or chosen not in allowed:
        raise Forbidden(f"This user cannot open a '{chosen or 'admin'}' session.",
                        code="session_not_allowed", details={"allowed_sessions": list(allowed)})
    return _grant(user, account, chosen, agent_id, via_sso=via_sso)


def _verified_user(subdomain: str, username: str, password: str) -> tuple[Row, uuid.UUID | None]:
    """(User+Account row, agent id) when the password matches an active user, else the one
    ``invalid_credentials`` answer after one bcrypt check."""
    row = None
    agent_id = None
    account_id = account_for_subdomain(subdomain)
    if account_id is not None:
        with tenant_session(account_id) as db:
            row = db.execute(
                select(User, Account)
                .join(Account, Account.id == User.account_id)
                .where(User.account_id == account_id, User.username == username)
            ).first()
            agent_id = _agent_id(db, row.User.id) if row is not None else None
    stored = row.User.password_hash if row is not None else _dummy_hash()
    matches = _verify_off_hub(password, stored)
    if row is None or not matches or not row.User.is_active:
        raise Unauthorized("Invalid username or password.", code="invalid_credentials")
    return row, agent_id


def reissue(db: Session, identity: Identity, session: str | None = None, *, exchange: bool = False) -> Grant:
    """Refresh (same session) or exchange (the other session, or the one asked for)."""
    found = load_user_and_account(db, identity.account_id, identity.user_id)
    if found is None:
        raise Unauthorized("The token's user no longer exists.", code="invalid_token")
    user, account = found
    ensure_enabled(account)
    agent_id = _agent_id(db, user.id)
    allowed = allowed_sessions(user, agent_id)
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
    if not identity.via_sso:  # a single sign-on's MFA is the identity provider's (docs/sso.md)
        _require_enrolment_if_needed(user, account, target, with_token=False)
    return _grant(user, account, target, agent_id, via_sso=identity.via_sso)
