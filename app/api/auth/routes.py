"""/auth/login, /auth/refresh, /auth/logout, /auth/exchange (not under /api/: no prior token
for login; refresh and exchange authenticate the presented token themselves)."""
from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from app.api.auth import service
from app.api.auth.schemas import ExchangeSchema, LoginSchema, TokenResponseSchema
from app.api.security import authenticated, current_identity, tenant_db
from app.api.tenancy import request_tenant

blp = Blueprint("auth", __name__, url_prefix="/auth", description="Log in and manage sessions")

_PUBLIC = {"security": []}


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
def login(data: dict[str, Any]) -> dict[str, Any]:
    """Log in on the tenant's host; returns a Bearer token."""
    subdomain = request_tenant()
    return _body(service.login(subdomain, data["username"], data["password"], data.get("session")))


@blp.route("/refresh", methods=["POST"])
@authenticated
@blp.response(200, TokenResponseSchema)
def refresh() -> dict[str, Any]:
    """Re-issue a token for the same user and session (the presented token must still be valid)."""
    with tenant_db() as db:
        return _body(service.reissue(db, current_identity()))


@blp.route("/exchange", methods=["POST"])
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
