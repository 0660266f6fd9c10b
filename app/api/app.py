"""The REST API application factory.

Blueprints are registered from ONE explicit list (``BLUEPRINTS``): adding a resource is one
import and one list entry here, nothing is discovered by name. Authentication is not left to each
blueprint: a ``before_request`` hook authenticates every ``/api/`` path (except the OpenAPI
document) before routing, so a new endpoint is protected by construction.
"""
from __future__ import annotations

from typing import Any, Mapping

from flask import Flask, request
from flask_jwt_extended import JWTManager
from flask_smorest import Api

from app.agent_channel.server import blp as agent_channel_blp
from app.agent_channel.server import is_channel_path
from app.api import errors
from app.api.account.routes import blp as account_blp
from app.api.agents.routes import blp as agents_blp
from app.api.api_keys.routes import blp as api_keys_blp
from app.api.applications.routes import blp as applications_blp
from app.api.auth.routes import blp as auth_blp
from app.api.auth.tokens import CONFIG_KEY as TOKEN_LIFETIME_KEY
from app.api.auth.tokens import lifetime_from_env
from app.api.bind_guard import refuse_exposed_dev_secret
from app.api.body_limit import BodyLimit
from app.api.call_flows.routes import blp as call_flows_blp
from app.api.call_records.routes import blp as call_records_blp
from app.api.callbacks.routes import blp as callbacks_blp
from app.api.calls.control_routes import blp as call_control_blp
from app.api.calls.routes import blp as calls_blp
from app.api.campaigns.routes import blp as campaigns_blp
from app.api.carriers.routes import blp as carriers_blp
from app.api.carriers.routes import gateways_blp
from app.api.console import blp as console_blp
from app.api.do_not_call.routes import blp as do_not_call_blp
from app.api.docs_ui import blp as docs_ui_blp
from app.api.docs_ui import is_docs_path
from app.api.input_guard import refuse_unusable_input
from app.api.lcr.routes import blp as lcr_blp
from app.api.lcr_explain import blp as lcr_explain_blp
from app.api.live.routes import blp as live_blp
from app.api.live.routes import is_stream_path
from app.api.moh.routes import blp as moh_blp
from app.api.openapi import BearerErrorsPlugin
from app.api.phone_numbers.routes import blp as phone_numbers_blp
from app.api.queues.routes import blp as queues_blp
from app.api.recordings.routes import blp as recordings_blp
from app.api.recordings.routes import call_media_blp, is_media_stream_path
from app.api.security import authenticate_request, close_request_session
from app.api.sip_targets.routes import blp as sip_targets_blp
from app.api.sso.routes import blp as sso_blp
from app.api.users.routes import blp as users_blp
from app.ops.health import Readiness, dependency_checks
from app.ops.http import OpsEndpoints
from app.settings import get_settings

API_PREFIX = "/api/"
OPENAPI_PATH = "/api/openapi.json"
MAX_BODY_BYTES = 1024 * 1024  # JSON bodies; the raw uploads (app/api/raw_uploads.py) have their own

# The one list of blueprints. Keep it explicit: one entry per resource.
BLUEPRINTS = [
    auth_blp,
    sso_blp,
    account_blp,
    api_keys_blp,
    callbacks_blp,
    applications_blp,
    phone_numbers_blp,
    call_records_blp,
    call_media_blp,
    recordings_blp,
    calls_blp,
    call_control_blp,
    call_flows_blp,
    carriers_blp,
    gateways_blp,
    lcr_blp,
    lcr_explain_blp,
    sip_targets_blp,
    queues_blp,
    moh_blp,
    users_blp,
    agents_blp,
    campaigns_blp,
    do_not_call_blp,
    live_blp,
]


class SbcApi(Api):
    """flask-smorest Api whose default HTTP error body is replaced by ours (see app.api.errors)."""

    ERROR_SCHEMA = errors.ErrorSchema

    def handle_http_exception(self, error):  # type: ignore[override]
        return errors.handle_http_exception(error)


def create_app(config: Mapping[str, Any] | None = None, *, bind_host: str | None = None) -> Flask:
    """``bind_host``: the address the caller's server listens on (``sbc api`` passes it); the
    built-in dev JWT secret is refused unless it is loopback only (``app.api.bind_guard``)."""
    settings = get_settings()
    refuse_exposed_dev_secret(bind_host)
    app = Flask("sbc_api")
    app.config.update(
        API_TITLE="SaaS-SBC API",
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/api",
        OPENAPI_JSON_PATH="openapi.json",
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        JWT_SECRET_KEY=settings.jwt_secret,
        JWT_ALGORITHM="HS256",
        JWT_DECODE_ALGORITHMS=["HS256"],
        JWT_TOKEN_LOCATION=["headers"],
        JWT_HEADER_NAME="Authorization",
        JWT_HEADER_TYPE="Bearer",
        JWT_DECODE_LEEWAY=0,
        SECRET_KEY=settings.secret_key,
    )
    app.config[TOKEN_LIFETIME_KEY] = lifetime_from_env()
    if config:
        app.config.update(config)

    jwt = JWTManager(app)
    _install_jwt_errors(jwt)

    api = SbcApi(app, spec_kwargs={"security": [{"bearerAuth": []}, {"apiKeyAuth": []}],
                                   "extra_plugins": [BearerErrorsPlugin()]})
    api.spec.components.security_scheme(
        "bearerAuth", {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                       "description": "A login token, or an API key (sk_...) as the bearer value"}
    )
    # every /api/ path takes either (app/api/api_key_auth.py); /api/docs offers both in Authorize
    api.spec.components.security_scheme(
        "apiKeyAuth", {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    )
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint)
    app.register_blueprint(docs_ui_blp)  # /api/docs: a page, not an API operation (not in OpenAPI)
    app.register_blueprint(console_blp)  # /console/: the web console's page and files (web/)
    # /api/agents/me/channel: a WebSocket (docs/agents.md), authenticated by its first message
    app.register_blueprint(agent_channel_blp)
    errors.register_error_handlers(app)

    app.teardown_request(close_request_session)
    # /healthz, /readyz, /metrics answer before Flask: no tenant host, no token (docs/operations.md)
    app.wsgi_app = OpsEndpoints(Readiness("api", dependency_checks(
        settings, database_url=settings.app_database_url))).middleware(app.wsgi_app)
    app.wsgi_app = BodyLimit(app.wsgi_app, MAX_BODY_BYTES)  # chunked bodies too (body_limit.py)

    @app.before_request
    def _authenticate_api() -> None:
        # OPTIONS is answered by Flask (Allow header) without running a view: it reads no data,
        # and the JWT library exempts it from verification, so there is no identity to load
        if (request.path.startswith(API_PREFIX) and request.path != OPENAPI_PATH
                and not is_docs_path(request.path) and not is_channel_path(request.path)
                and not is_stream_path(request.path) and not is_media_stream_path(request.path)
                and request.method != "OPTIONS"):
            authenticate_request(allow_api_keys=True)
        refuse_unusable_input()  # after authentication: an anonymous caller learns nothing more

    return app


def _install_jwt_errors(jwt: JWTManager) -> None:
    """Flask-JWT-Extended's failures in our error shape, with fixed messages (no token echo)."""

    @jwt.unauthorized_loader
    def _missing(_reason: str):
        return errors.error_body(401, "missing_token", "Send 'Authorization: Bearer <token>'.")

    @jwt.invalid_token_loader
    def _invalid(_reason: str):
        return errors.error_body(401, "invalid_token", "The token is not valid.")

    @jwt.expired_token_loader
    def _expired(_header: dict, _payload: dict):
        return errors.error_body(401, "token_expired", "The token has expired; log in again.")

    @jwt.revoked_token_loader
    def _revoked(_header: dict, _payload: dict):
        return errors.error_body(401, "invalid_token", "The token is not valid.")

    @jwt.user_lookup_error_loader
    def _no_user(_header: dict, _payload: dict):
        return errors.error_body(401, "invalid_token", "The token is not valid.")
