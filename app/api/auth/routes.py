"""/auth/login, /auth/login/mfa, /auth/refresh, /auth/logout, /auth/exchange and the second
factor's /auth/mfa/* (not under /api/: no prior token for login; the others authenticate the
presented token themselves, and API keys are refused here)."""
from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from flask import current_app, request
from flask.typing import ResponseReturnValue
from flask_jwt_extended import decode_token
from flask_smorest import Blueprint
from sqlalchemy.orm import Session
from werkzeug.exceptions import HTTPException

from app.accounts.login_throttle import LoginThrottle
from app.accounts.users import load_user_and_account
from app.api.auth import challenge, mfa, service
from app.api.auth.schemas import (
    ConfirmedSchema,
    ConfirmSchema,
    EnrolmentSchema,
    EnrolSchema,
    ExchangeSchema,
    LoginSchema,
    MfaLoginSchema,
    MfaStatusSchema,
    RecoveryCodesSchema,
    RegenerateSchema,
    TokenResponseSchema,
)
from app.api.errors import ErrorSchema, handle_http_exception, handle_sbc_error
from app.api.security import authenticate_request, authenticated, current_identity, session_revocations, tenant_db
from app.api.tenancy import request_tenant
from app.db.engine import tenant_session
from app.errors import SbcError, TooManyLoginAttempts, Unauthorized
from app.models.tenancy import Account
from app.models.users import User

blp = Blueprint("auth", __name__, url_prefix="/auth", description="Log in and manage sessions")

_PUBLIC = {"security": []}
_TOKEN_ONLY = {"security": [{"bearerAuth": []}]}  # a login token; API keys are refused here
_TOKEN_OR_ENROLMENT = {"security": [{"bearerAuth": []}, {}]}  # or an enrolment token in the body
# app.extensions key of the app's LoginThrottle (one Redis client per app; tests put their own).
THROTTLE_EXTENSION = "sbc_login_throttle"
# app.extensions key of the clock TOTP codes are checked against (seconds since the epoch);
# tests freeze it, production leaves it unset (time.time).
MFA_CLOCK_EXTENSION = "sbc_mfa_clock"


def mfa_now() -> float:
    clock: Callable[[], float] = current_app.extensions.get(MFA_CLOCK_EXTENSION, time.time)
    return clock()


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
LOGIN_ENDPOINTS = frozenset({LOGIN_ENDPOINT, "auth.login_mfa"})


def _count_refused_login(status: int) -> ResponseReturnValue | None:
    """None when nothing changes; the 429 answer when the address budget is spent."""
    if request.endpoint not in LOGIN_ENDPOINTS or status not in _REFUSED_INPUT_STATUSES:
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


def login_body(grant: service.Grant) -> dict[str, Any]:
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
@blp.alt_response(401, schema=ErrorSchema, description=(
    "invalid_credentials; or mfa_required: the password is right and the user has a second "
    "factor, details {challenge_token, expires_in, methods}: send it to POST /auth/login/mfa"))
@blp.alt_response(403, schema=ErrorSchema, description=(
    "session_not_allowed, account_disabled; or mfa_enrolment_required: the tenant requires a "
    "second factor, details {enrolment_token, expires_in} for POST /auth/mfa/totp"))
@blp.alt_response(429, schema=ErrorSchema,
                  description="too_many_login_attempts: see the Retry-After header (seconds)")
def login(data: dict[str, Any]) -> dict[str, Any]:
    """Log in on the tenant's host; returns a Bearer token.

    Failed logins are rate limited per (tenant, username) and per client address (429)."""
    subdomain = request_tenant()
    return login_body(service.login(subdomain, data["username"], data["password"], data.get("session"),
                                    throttle=login_throttle(), address=request.remote_addr))


@blp.route("/refresh", methods=["POST"])
@blp.doc(**_TOKEN_ONLY)
@authenticated
@blp.response(200, TokenResponseSchema)
def refresh() -> dict[str, Any]:
    """Re-issue a token for the same user and session (the presented token must still be valid)."""
    with tenant_db() as db:
        return login_body(service.reissue(db, current_identity()))


@blp.route("/exchange", methods=["POST"])
@blp.doc(**_TOKEN_ONLY)
@authenticated
@blp.arguments(ExchangeSchema)
@blp.response(200, TokenResponseSchema)
def exchange(data: dict[str, Any]) -> dict[str, Any]:
    """Trade a valid token for the other session (admin ↔ agent) of the same user."""
    with tenant_db() as db:
        return login_body(service.reissue(db, current_identity(), data.get("session"), exchange=True))


@blp.route("/login/mfa", methods=["POST"])
@blp.doc(**_PUBLIC)
@blp.arguments(MfaLoginSchema)
@blp.response(200, TokenResponseSchema)
@blp.alt_response(401, schema=ErrorSchema, description=(
    "invalid_mfa_challenge, mfa_challenge_expired, invalid_mfa_code, mfa_code_reused"))
@blp.alt_response(429, schema=ErrorSchema,
                  description="too_many_login_attempts: see the Retry-After header (seconds)")
@blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable (Redis)")
def login_mfa(data: dict[str, Any]) -> dict[str, Any]:
    """Second step of a login: the challenge token plus a TOTP or recovery code.

    Answers the login body. The challenge is single use; wrong codes are throttled like
    passwords."""
    subdomain = request_tenant()
    return login_body(service.login_second_factor(
        subdomain, data["challenge_token"], data["code"], throttle=login_throttle(),
        revocations=session_revocations(), address=request.remote_addr, now=mfa_now()))


@blp.route("/logout", methods=["POST"])
@blp.doc(**_PUBLIC)
@blp.response(204)
@blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable: not revoked")
def logout() -> None:
    """End this session: the presented token is revoked (every API process refuses it from now on).

    Without a token, or with one that is already invalid, there is nothing to revoke: 204 all
    the same. Other sessions of the user stay; an administrator's DELETE
    /api/users/{id}/sessions ends them all."""
    claims = _presented_claims()
    if claims is not None:
        session_revocations().revoke_token(claims)
    return None


def _presented_claims() -> dict[str, Any] | None:
    """The verified claims of the Bearer login token for this host, or None."""
    header = request.headers.get("Authorization", "")
    scheme, _, raw = header.partition(" ")
    if scheme != "Bearer" or not raw.strip():
        return None
    try:
        claims = decode_token(raw.strip())
    except Exception:  # any decode failure: an invalid token has nothing to revoke
        return None
    if claims.get("type") != "access" or claims.get("tenant") != request_tenant():
        return None
    return claims


# --- second factor (TOTP) ---------------------------------------------------------------------

@contextmanager
def _enrolling_user(enrolment_token: str | None) -> Iterator[tuple[Session, User, Account, "challenge.Restricted | None"]]:
    """The user enrolling: from the Bearer session token, or from the login's enrol-only token."""
    if enrolment_token is None:
        identity = authenticate_request()
        with tenant_db() as db:
            yield (db, *_user_row(db, identity.account_id, identity.user_id), None)
        return
    pending = challenge.read(enrolment_token, challenge.ENROLMENT, request_tenant())
    session_revocations().check(pending.claims)  # sign-out-everywhere kills it like a session
    with tenant_session(pending.account_id) as db:
        yield (db, *_user_row(db, pending.account_id, pending.user_id), pending)


def _user_row(db: Session, account_id: uuid.UUID, user_id: uuid.UUID) -> tuple[User, Account]:
    found = load_user_and_account(db, account_id, user_id)
    if found is None:
        raise Unauthorized("The token's user no longer exists.", code="invalid_token")
    return found


@blp.route("/mfa", methods=["GET"])
@blp.doc(**_TOKEN_ONLY)
@authenticated
@blp.response(200, MfaStatusSchema)
def mfa_status() -> dict[str, Any]:
    """The caller's second factor: none, pending (enrolment not confirmed) or enrolled."""
    identity = current_identity()
    with tenant_db() as db:
        user, account = _user_row(db, identity.account_id, identity.user_id)
        return mfa.status(user, account)


@blp.route("/mfa/totp", methods=["POST"])
@blp.doc(**_TOKEN_OR_ENROLMENT)
@blp.arguments(EnrolSchema)
@blp.response(200, EnrolmentSchema)
@blp.alt_response(409, schema=ErrorSchema, description="totp_already_enrolled")
def mfa_enrol(data: dict[str, Any]) -> dict[str, Any]:
    """Start enrolling an authenticator app: a new secret, shown once (URI, QR code).

    Authenticated by a Bearer session token, or by the enrolment token of a login answered
    mfa_enrolment_required. Not active until confirmed; starting again replaces a pending one."""
    from app import limits

    with _enrolling_user(data.get("enrolment_token")) as (db, user, account, _pending):
        shown = mfa.begin(db, user, account)
    return {"secret": shown.secret, "otpauth_uri": shown.otpauth_uri, "qr_svg": shown.qr_svg,
            "digits": limits.TOTP_DIGITS, "period": limits.TOTP_STEP_SECONDS}


@blp.route("/mfa/totp/confirm", methods=["POST"])
@blp.doc(**_TOKEN_OR_ENROLMENT)
@blp.arguments(ConfirmSchema)
@blp.response(200, ConfirmedSchema)
@blp.alt_response(409, schema=ErrorSchema,
                  description="totp_already_enrolled, totp_enrolment_not_started")
def mfa_confirm(data: dict[str, Any]) -> dict[str, Any]:
    """Activate the pending secret with the code the app shows; answers the recovery codes (once).

    With an enrolment token the answer also carries ``login``: the session, as a login would."""
    with _enrolling_user(data.get("enrolment_token")) as (db, user, account, pending):
        codes = mfa.confirm(db, user, data["code"], mfa_now())
        grant = service.grant_verified(db, user, account, pending.session) if pending else None
        enrolled_at = user.totp_confirmed_at
    return {"recovery_codes": codes, "enrolled_at": enrolled_at,
            "login": login_body(grant) if grant is not None else None}


@blp.route("/mfa/recovery-codes", methods=["POST"])
@blp.doc(**_TOKEN_ONLY)
@authenticated
@blp.arguments(RegenerateSchema)
@blp.response(200, RecoveryCodesSchema)
@blp.alt_response(409, schema=ErrorSchema, description="totp_not_enrolled")
@blp.alt_response(429, schema=ErrorSchema, description="too_many_login_attempts")
def mfa_recovery_codes(data: dict[str, Any]) -> dict[str, Any]:
    """Replace the recovery codes (the old ones stop working) against a current TOTP code.

    Wrong codes count in the same throttle as the sign-in's second step."""
    identity = current_identity()
    attempt = login_throttle().begin(identity.subdomain, f"{identity.user_id}\0totp", request.remote_addr)
    try:
        with tenant_db() as db:
            user, _account = _user_row(db, identity.account_id, identity.user_id)
            codes = mfa.regenerate_recovery_codes(db, user, data["code"], mfa_now())
    except Unauthorized:
        raise
    except BaseException:
        attempt.abandoned()
        raise
    attempt.succeeded()
    return {"recovery_codes": codes}
