"""/auth/login, /auth/refresh, /auth/logout, /auth/exchange (not under /api/: no prior token
for login; refresh and exchange authenticate the presented token themselves)."""
from __future__ import annotations

from typing import Any

from flask import current_app, request
from flask.typing import ResponseReturnValue
from flask_smorest import Blueprint
from werkzeug.exceptions import HTTPException

from app.accounts.login_throttle import LoginThrottle
from app.api.auth import service
from app.api.auth.schemas import ExchangeSchema, LoginSchema, TokenResponseSchema
from app.api.errors import ErrorSchema, handle_http_exception, handle_sbc_error
from app.api.security import authenticated, current_identity, tenant_db
from app.api.tenancy import request_tenant
from app.errors import SbcError, TooManyLoginAttempts

blp = Blueprint("auth", __name__, url_prefix="/auth", description="Log in and manage sessions")

_PUBLIC = {"security": []}
_TOKEN_ONLY = {"security": [{"bearerAuth": []}]}  # a login token; API keys are refused here
# app.extensions key of the app's LoginThrottle (one Redis client per app; tests put their own).
THROTTLE_EXTENSION = "sbc_login_throttle"


def login_throttle() -> LoginThrottle:
    throttle = current_app.extensions.get(THROTTLE_EXTENSION)
    if throttle is None:
        throttle = current_app.extensions[THROTTLE_EXTENSION] = LoginThrottle()
    return throttle


@blp.errorhandler(TooManyLoginAttempts)
def _too_many_attempts(error: TooManyLoginAttempts) -> ResponseReturnValue:
    """The project's error body plus ``Retry-After`` (seconds), which the shared handler lacks."""
    body, status = handle_sbc_error(error)  # type: ignore[misc]
    return body, status, {"Retry-After": str(error.retry_after_seconds)}


# A login refused for its input (not JSON, unusable text, failed validation, too large) never
# reaches the password check, so the service cannot count it; these handlers do, per address.
_REFUSED_INPUT_STATUSES = frozenset({400, 413, 415, 422})
LOGIN_ENDPOINT = "auth.login"


def _count_refused_login(status: int) -> ResponseReturnValue | None:
    """None when nothing changes; the 429 answer when the address budget is spent."""
    if request.endpoint != LOGIN_ENDPOINT or status not in _REFUSED_INPUT_STATUSES:
        return None
    try:
        login_throttle().refused(request.remote_addr)
    except TooManyLoginAttempts as exc:
        return _too_many_attempts(exc)
    return None


@blp.errorhandler(SbcError)
def _refused_input(error: SbcError) -> ResponseReturnValue:
    return _count_refused_login(error.status) or handle_sbc_error(error)


@blp.errorhandler(HTTPException)
def _refused_request(error: HTTPException) -> ResponseReturnValue:
    return _count_refused_login(error.code or 500) or handle_http_exception(error)


def _body(grant: service.Grant) -> dict[str, Any]:
    return {
        "token": grant.issued.token,
        "token_type": "Bearer",
        "expires_in": grant.issued.expires_in,
        "expires_at": grant.issued.expires_at,
        "session": grant.issued.session,
        "user": {
            "id": grant.user.id, "username": grant.user.username, "role": grant.user.role,
            "permissions": sorted(grant.permissions), "agent_id": grant.agent_id,
        },
        "account": {
            "id": grant.account.id, "subdomain": grant.account.subdomain,
            "licenses": sorted(grant.account.licenses or []),
        },
    }


@blp.route("/login", methods=["POST"])
@blp.doc(**_PUBLIC)
@blp.arguments(LoginSchema)
@blp.response(200, TokenResponseSchema)
@blp.alt_response(429, schema=ErrorSchema,
                  description="too_many_login_attempts: see the Retry-After header (seconds)")
def login(data: dict[str, Any]) -> dict[str, Any]:
    """Log in on the tenant's host; returns a Bearer token.

    Failed logins are rate limited per (tenant, username) and per client address (429)."""
    subdomain = request_tenant()
    return _body(service.login(subdomain, data["username"], data["password"], data.get("session"),
                               throttle=login_throttle(), address=request.remote_addr))


@blp.route("/refresh", methods=["POST"])
@blp.doc(**_TOKEN_ONLY)
@authenticated
@blp.response(200, TokenResponseSchema)
def refresh() -> dict[str, Any]:
    """Re-issue a token for the same user and session (the presented token must still be valid)."""
    with tenant_db() as db:
        return _body(service.reissue(db, current_identity()))


@blp.route("/exchange", methods=["POST"])
@blp.doc(**_TOKEN_ONLY)
@authenticated
@blp.arguments(ExchangeSchema)
@blp.response(200, TokenResponseSchema)
def exchange(data: dict[str, Any]) -> dict[str, Any]:
    """Trade a valid token for the other session (admin ↔ agent) of the same user."""
    with tenant_db() as db:
        return _body(service.reissue(db, current_identity(), data.get("session"), exchange=True))


@blp.route("/logout", methods=["POST"])
@blp.doc(**_PUBLIC)
@blp.response(204)
def logout() -> None:
    """Stateless: tokens are not revoked; the client discards its token."""
    return None
