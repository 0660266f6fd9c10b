"""/auth/sso: the login page's options, the start of a single sign-on and its callback.

Public (no prior token), on the tenant's host name like /auth/login: the host decides whose
identity provider is used, and the callback only finishes a sign-in started on the same host —
an ID token from tenant A's issuer never opens tenant B (B's state, B's provider, B's issuer and
client checked; A's state is refused on B's host)."""
from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Callable

from flask import current_app, jsonify
from flask.typing import ResponseReturnValue
from flask_smorest import Blueprint

from app.accounts.sso import service
from app.accounts.sso.errors import SsoDenied, SsoIssuerMismatch, SsoNotConfigured, SsoUserDisabled
from app.accounts.sso.flow_state import FlowStates
from app.accounts.users import load_user_and_account
from app.api.auth import service as auth_service
from app.api.auth.routes import login_body
from app.api.auth.schemas import TokenResponseSchema
from app.api.errors import ErrorSchema
from app.api.security import session_revocations
from app.api.sso import config
from app.api.sso.schemas import (
    SsoCallbackBodySchema,
    SsoCallbackQuerySchema,
    SsoOptionsSchema,
    SsoStartQuerySchema,
    SsoStartSchema,
)
from app.api.tenancy import request_tenant
from app.db.engine import tenant_session
from app.errors import ValidationFailed
from app.models.sso import SsoProvider

log = logging.getLogger(__name__)

blp = Blueprint("sso", __name__, url_prefix="/auth/sso", description="Single sign-on (OpenID Connect)")

_PUBLIC = {"security": []}
# app.extensions keys: the flow-state store (one Redis client per app) and the clock ID tokens
# are checked against (seconds since the epoch; tests move it, production leaves it unset)
STATES_EXTENSION = "sbc_sso_states"
SSO_CLOCK_EXTENSION = "sbc_sso_clock"
# a browser lands on the callback: the page holding a token is never cached
_NO_STORE = {"Cache-Control": "no-store"}
_REFUSALS = ("sso_state_invalid, sso_denied, sso_issuer_mismatch, sso_audience_mismatch, "
             "sso_token_expired, sso_signature_invalid, sso_nonce_mismatch, sso_token_invalid")


def _states() -> FlowStates:
    states = current_app.extensions.get(STATES_EXTENSION)
    if states is None:
        states = current_app.extensions[STATES_EXTENSION] = FlowStates()
    return states


def _now() -> float:
    clock: Callable[[], float] = current_app.extensions.get(SSO_CLOCK_EXTENSION, time.time)
    return clock()


def _enabled_provider(db: Any, account_id: uuid.UUID) -> SsoProvider:
    provider = config.find(db, account_id)
    if provider is None or not provider.enabled:
        raise SsoNotConfigured("This account has no single sign-on; sign in with a password.")
    return provider


def _tenant_account() -> tuple[str, uuid.UUID]:
    subdomain = request_tenant()
    account_id = auth_service.account_for_subdomain(subdomain)
    if account_id is None:
        raise SsoNotConfigured("This account has no single sign-on; sign in with a password.")
    return subdomain, account_id


@blp.route("", methods=["GET"])
@blp.doc(**_PUBLIC)
@blp.response(200, SsoOptionsSchema)
def options() -> dict[str, Any]:
    """What the login page offers on this host: "Sign in with <display_name>", or nothing.

    No secret, issuer or client id: only the label and where the button goes."""
    account_id = auth_service.account_for_subdomain(request_tenant())
    label = None
    if account_id is not None:
        with tenant_session(account_id) as db:
            provider = config.find(db, account_id)
            label = provider.display_name if provider is not None and provider.enabled else None
    if label is None:
        return {"enabled": False, "display_name": None, "start_url": None}
    return {"enabled": True, "display_name": label, "start_url": blp.url_prefix + "/start"}


@blp.route("/start", methods=["GET"])
@blp.doc(**_PUBLIC)
@blp.arguments(SsoStartQuerySchema, location="query")
@blp.response(302, SsoStartSchema, description="Location: the provider's authorization URL (also in the body)")
@blp.alt_response(404, schema=ErrorSchema, description="sso_not_configured")
@blp.alt_response(502, schema=ErrorSchema, description=(
    "sso_provider_unavailable: the issuer is refused by the URL guard (details.reason unsafe_url), "
    "unreachable, or its discovery document is not usable"))
@blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable (Redis)")
def start(query: dict[str, Any]) -> ResponseReturnValue:
    """Start a single sign-on: redirect the browser to the tenant's identity provider.

    Authorization code flow with PKCE (S256), a state and a nonce, kept single-use for
    the sign-in's ``expires_in`` seconds."""
    subdomain, account_id = _tenant_account()
    with tenant_session(account_id) as db:
        provider = _enabled_provider(db, account_id)
        url, expires_in = service.start(provider, _states(), tenant=subdomain, session=query.get("session"),
                                        redirect_uri=config.redirect_uri(query["redirect_path"]))
    response = jsonify({"authorization_url": url, "expires_in": expires_in})
    response.status_code = 302
    response.headers["Location"] = url
    response.headers.update(_NO_STORE)
    return response


def _finish(subdomain: str, state: str, code: str | None, error: str | None, iss: str | None) -> dict[str, Any]:
    pending = service.take_state(_states(), state, subdomain)
    if error is not None:
        raise SsoDenied(f"The identity provider did not sign the user in ({error[:64]}).", details={"error": error[:64]})
    if code is None:
        raise ValidationFailed("The provider's answer has no code.", details={"code": ["Missing data for required field."]})
    account_id = uuid.UUID(pending.account_id)
    revocations = session_revocations()
    with tenant_session(account_id) as db:
        provider = _enabled_provider(db, account_id)
        if iss is not None and iss != provider.issuer:  # RFC 9207: answer of another provider (mix-up)
            raise SsoIssuerMismatch("The answer comes from another identity provider than this tenant's.")
        signed = service.finish(db, provider, pending, code, _now())
        if signed.role_changed:
            revocations.revoke_user(signed.user.id)  # as an admin's role change: before the commit
        found = load_user_and_account(db, account_id, signed.user.id)
        if found is None:  # deactivated between the match and now
            raise SsoUserDisabled("This user is deactivated in the account.")
        grant = auth_service.grant_verified(db, *found, pending.session, via_sso=True)
    log.info("single sign-on: user %s of %s signed in (created=%s role_changed=%s)",
             signed.user.id, subdomain, signed.created, signed.role_changed)
    return login_body(grant)


@blp.route("/callback", methods=["GET"])
@blp.doc(**_PUBLIC)
@blp.arguments(SsoCallbackQuerySchema, location="query")
@blp.response(200, TokenResponseSchema)
@blp.alt_response(400, schema=ErrorSchema, description="sso_state_invalid: unknown, expired, used, or another host's")
@blp.alt_response(401, schema=ErrorSchema, description=_REFUSALS)
@blp.alt_response(403, schema=ErrorSchema, description=(
    "sso_user_not_provisioned, sso_role_not_mapped, sso_user_disabled, session_not_allowed, account_disabled"))
@blp.alt_response(502, schema=ErrorSchema, description="sso_provider_unavailable (details.reason, details.endpoint)")
@blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable (Redis)")
def callback(query: dict[str, Any]) -> ResponseReturnValue:
    """Where the provider sends the browser back: answers the login body, as POST /auth/login.

    The state is used up by this request whatever the outcome."""
    body = _finish(request_tenant(), query["state"], query.get("code"), query.get("error"), query.get("iss"))
    return body, 200, _NO_STORE


@blp.route("/callback", methods=["POST"])
@blp.doc(**_PUBLIC)
@blp.arguments(SsoCallbackBodySchema)
@blp.response(200, TokenResponseSchema)
@blp.alt_response(400, schema=ErrorSchema, description="sso_state_invalid")
@blp.alt_response(401, schema=ErrorSchema, description=_REFUSALS)
@blp.alt_response(403, schema=ErrorSchema, description="sso_user_not_provisioned, sso_role_not_mapped, sso_user_disabled")
@blp.alt_response(502, schema=ErrorSchema, description="sso_provider_unavailable")
@blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable (Redis)")
def callback_post(data: dict[str, Any]) -> ResponseReturnValue:
    """The same as GET, for a console page registered as the redirect (``redirect_path``): the
    page reads code and state from its URL and posts them here, keeping the token out of URLs."""
    return _finish(request_tenant(), data["state"], data["code"], None, None), 200, _NO_STORE
