"""Who is calling, for which tenant, and what they may do.

Every ``/api/`` request passes ``authenticate_request`` (installed as a ``before_request`` hook by
the app factory, so a new blueprint cannot forget it):

1. a valid Bearer JWT (signature, expiry) — 401 ``missing_token`` / ``invalid_token`` /
   ``token_expired``;
2. the token's ``tenant`` claim equals the Host's subdomain — 401 ``tenant_mismatch``;
3. the token is not revoked (logout, sign out everywhere, password or role change:
   ``app.accounts.revocation``, one Redis round trip) — 401 ``token_revoked``, or 503
   ``session_store_unavailable`` when Redis cannot answer (fail closed; API keys are not sessions
   and are not checked);
4. the user and the account are re-read in the request's RLS-scoped session — 401
   ``invalid_token`` if either is gone or the user is deactivated. Licenses and permissions come from these rows, never from the token.

Views then declare what they need with ``@require_license`` and ``@require_permission`` (403
``license_required`` / ``permission_denied``) and do their work in ``with tenant_db() as db``.
Put the license check first: a tenant without the add-on learns that before anything else.

One database session per request, as the API role: every transaction it begins is scoped to the
caller's account (``after_begin`` sets ``app.current_account``, the same transaction-local
setting ``app.db.engine.tenant_session`` uses), so the identity check and the view's work share
one connection checkout and one transaction (three fewer database round trips per request than
two ``tenant_session`` blocks: pool ping, set_config, commit).
"""
from __future__ import annotations

import functools
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, TypeVar

from flask import current_app, g, request
from flask_jwt_extended import get_jwt, verify_jwt_in_request
from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker

from app.accounts.revocation import SessionRevocations
from app.accounts.users import load_user_and_account
from app.api import api_key_auth
from app.api.auth.tokens import SSO_CLAIM
from app.api.openapi import document_forbidden
from app.api.tenancy import request_tenant
from app.db.engine import TENANT_SETTING, app_engine
from app.errors import Forbidden, Unauthorized
from app.models.enums import LICENSES, PERMISSIONS

F = TypeVar("F", bound=Callable[..., Any])

# Role whose admin session holds every permission; other roles hold what ``users.permissions`` lists.
SUPERUSER_ROLE = "admin"
# app.extensions key of the app's SessionRevocations (one Redis client per app; tests put their own).
REVOCATIONS_EXTENSION = "sbc_session_revocations"
TOKEN_LIFETIME_KEY = "SBC_TOKEN_LIFETIME_SECONDS"  # app.api.auth.tokens.CONFIG_KEY


def session_revocations() -> SessionRevocations:
    """The app's deny-list of login tokens (created on first use, shared by its requests)."""
    store = current_app.extensions.get(REVOCATIONS_EXTENSION)
    if store is None:
        store = current_app.extensions[REVOCATIONS_EXTENSION] = SessionRevocations(
            int(current_app.config[TOKEN_LIFETIME_KEY]))
    return store


@dataclass(frozen=True)
class Identity:
    """The authenticated caller of this request (fresh from the database, not from the token)."""

    account_id: uuid.UUID
    user_id: uuid.UUID
    username: str
    role: str
    session: str
    subdomain: str
    permissions: frozenset[str]
    licenses: frozenset[str]
    api_key_id: uuid.UUID | None = None  # set when the caller presented an API key, not a JWT
    via_sso: bool = False  # the session began with a single sign-on (token claim ``sso``)


_RequestSession = sessionmaker(expire_on_commit=False)


@event.listens_for(_RequestSession, "after_begin")
def _scope_to_tenant(session: Session, _transaction: SessionTransaction, connection: Connection) -> None:
    connection.execute(
        text("SELECT set_config(:name, :value, true)"),
        {"name": TENANT_SETTING, "value": str(session.info["account_id"])},
    )


def _request_session(account_id: uuid.UUID) -> Session:
    db = g.get("sbc_db")
    if db is None:
        db = _RequestSession(bind=app_engine(), info={"account_id": account_id})
        g.sbc_db = db
    elif db.info["account_id"] != account_id:  # cannot happen through authenticate_request
        raise RuntimeError("request session already bound to another account")
    return db


def close_request_session(_exc: BaseException | None = None) -> None:
    """Teardown hook: whatever a view did not commit is rolled back, the connection returned."""
    db = g.pop("sbc_db", None)
    if db is not None:
        db.close()


def effective_permissions(role: str, session: str, granted: list[str] | None) -> frozenset[str]:
    """An admin acting in an admin session may do everything; anyone else (including an admin
    who exchanged into an agent session) only what was granted explicitly."""
    if role == SUPERUSER_ROLE and session == "admin":
        return frozenset(PERMISSIONS)
    return frozenset(p for p in (granted or []) if p in PERMISSIONS)


def _claim_uuid(claims: dict[str, Any], name: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(claims[name]))
    except (KeyError, ValueError) as exc:
        raise Unauthorized("The token is not valid.", code="invalid_token") from exc


def authenticate_request(*, allow_api_keys: bool = False) -> Identity:
    """Verify the bearer token (or, on ``/api/*``, an API key) against the host and the
    database; cache the identity on ``g``."""
    if allow_api_keys:
        key = api_key_auth.presented_key()
        if key is not None:
            identity = authenticate_api_key(key)
            g.sbc_identity = identity
            return identity
    verify_jwt_in_request()
    claims = get_jwt()
    host_tenant = request_tenant()
    if claims.get("tenant") != host_tenant:
        raise Unauthorized("This token was issued for another tenant.", code="tenant_mismatch")
    user_id = _claim_uuid(claims, "sub")
    account_id = _claim_uuid(claims, "acct")
    session_kind = claims.get("session")
    if session_kind not in ("admin", "agent"):
        raise Unauthorized("The token is not valid.", code="invalid_token")
    identity = load_identity(account_id, user_id, session_kind, host_tenant, claims=claims)
    g.sbc_identity = identity
    return identity


def authenticate_api_key(key: str) -> Identity:
    """The identity an API key stands for (docs/api.md "API keys as credentials"): the key's
    account on this host only, its creator's admin-session rights narrowed to the key's scopes."""
    from app.accounts.admin import ensure_enabled

    host_tenant = request_tenant()
    with app_engine().connect() as conn:
        account_id = conn.scalar(text("SELECT account_id_for_subdomain(:s)"), {"s": host_tenant})
    if account_id is None:
        raise Unauthorized("The API key is not valid for this tenant.", code="invalid_api_key")
    db = _request_session(account_id)
    row = api_key_auth.find_key(db, account_id, key)
    found = load_user_and_account(db, account_id, row.created_by) if row.created_by else None
    if found is None:
        raise Unauthorized("The user who created this API key is gone or deactivated.",
                           code="api_key_owner_inactive")
    user, account = found
    ensure_enabled(account)
    api_key_auth.check_scope(list(row.scopes or []), api_key_auth.required_scope(), request.method)
    api_key_auth.touch_last_used(db, row)
    permissions = effective_permissions(user.role, "admin", user.permissions)
    return Identity(
        account_id=account.id, user_id=user.id, username=user.username, role=user.role,
        session="admin", subdomain=account.subdomain,
        permissions=frozenset(p for p in permissions if not p.startswith("api_keys.")),
        licenses=frozenset(l for l in (account.licenses or []) if l in LICENSES),
        api_key_id=row.id,
    )


def load_identity(account_id: uuid.UUID, user_id: uuid.UUID, session_kind: str, subdomain: str, *,
                  claims: dict[str, Any]) -> Identity:
    """The caller of a login token: not revoked (``claims``: the verified token's), user and
    account fresh from the database. REST and the agent channel both come through here."""
    from app.accounts.admin import ensure_enabled

    session_revocations().check(claims)
    found = load_user_and_account(_request_session(account_id), account_id, user_id)
    if found is None:
        raise Unauthorized("The token's user or account no longer exists.", code="invalid_token")
    user, account = found
    if account.subdomain != subdomain:
        raise Unauthorized("This token was issued for another tenant.", code="tenant_mismatch")
    ensure_enabled(account)
    return Identity(
        account_id=account.id,
        user_id=user.id,
        username=user.username,
        role=user.role,
        session=session_kind,
        subdomain=account.subdomain,
        permissions=effective_permissions(user.role, session_kind, user.permissions),
        licenses=frozenset(l for l in (account.licenses or []) if l in LICENSES),
        via_sso=claims.get(SSO_CLAIM) is True,
    )


def current_identity() -> Identity:
    identity = g.get("sbc_identity")
    if identity is None:
        raise Unauthorized("Authentication required.", code="missing_token")
    return identity


def authenticated(view: F) -> F:
    """For endpoints outside /api/ that need a token (/auth/refresh, /auth/exchange): verify it
    before the body is even parsed."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        authenticate_request()
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextmanager
def tenant_db() -> Iterator[Session]:
    """The request's RLS-scoped session for the caller's account: commits when the block
    succeeds, rolls back if it raises. Several blocks in one request are several transactions."""
    db = _request_session(current_identity().account_id)
    try:
        yield db
        db.commit()
    except BaseException:
        db.rollback()
        raise


def _require(kind: str, name: str, held: Callable[[Identity], frozenset[str]],
             message: str, code: str) -> Callable[[F], F]:
    """One guard for both licenses and permissions: 403 ``code`` unless ``name`` is held."""

    def decorate(view: F) -> F:
        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if name not in held(current_identity()):
                raise Forbidden(message, code=code, details={kind: name})
            return view(*args, **kwargs)

        document_forbidden(wrapper, f"Requires {kind} `{name}` (403 `{code}`).")
        return wrapper  # type: ignore[return-value]

    return decorate


def require_permission(name: str) -> Callable[[F], F]:
    if name not in PERMISSIONS:
        raise ValueError(f"unknown permission {name!r}")  # a typo must fail at import, not at 403
    return _require("permission", name, lambda who: who.permissions,
                    f"Permission '{name}' is required.", "permission_denied")


def require_license(name: str) -> Callable[[F], F]:
    if name not in LICENSES:
        raise ValueError(f"unknown license {name!r}")
    return _require("license", name, lambda who: who.licenses,
                    f"The account has no '{name}' license.", "license_required")
