"""/api/account (admin session)."""
from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.account import service
from app.api.account.schemas import AccountMfaSchema, AccountPatchSchema, AccountSchema
from app.api.common import require_admin
from app.api.errors import ErrorSchema
from app.api.security import current_identity, tenant_db
from app.api.sso import config as sso_config
from app.api.sso.schemas import SsoConfigSchema, SsoConfigWriteSchema

blp = Blueprint("account", __name__, url_prefix="/api/account", description="Your account")


@blp.route("")
class OwnAccount(MethodView):
    @require_admin
    @blp.response(200, AccountSchema)
    def get(self):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id)

    @require_admin
    @blp.arguments(AccountPatchSchema)
    @blp.response(200, AccountSchema)
    def patch(self, data: dict[str, Any]):
        """Lower the account's concurrency limit (effective from the next call)."""
        with tenant_db() as db:
            return service.lower_limit(db, current_identity().account_id, data["max_concurrent_calls"])


@blp.route("/mfa")
class AccountMfa(MethodView):
    @require_admin
    @blp.arguments(AccountMfaSchema)
    @blp.response(200, AccountSchema)
    def put(self, data: dict[str, Any]):
        """Require (or stop requiring) a TOTP second factor of every user of the account.

        From the next login: a user without one is answered 403 mfa_enrolment_required with an
        enrol-only token, and refresh/exchange of their current sessions is refused the same
        way. API keys are not affected."""
        with tenant_db() as db:
            return service.set_mfa_required(db, current_identity().account_id, data["required"])


@blp.route("/sso")
class AccountSso(MethodView):
    @require_admin
    @blp.response(200, SsoConfigSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="sso_not_configured")
    def get(self):
        """The account's OpenID provider for single sign-on (docs/sso.md); never the client secret."""
        with tenant_db() as db:
            return sso_config.answer(sso_config.get(db, current_identity().account_id))

    @require_admin
    @blp.arguments(SsoConfigWriteSchema)
    @blp.response(200, SsoConfigSchema)
    @blp.alt_response(422, schema=ErrorSchema, description=(
        "validation_failed; unsafe_url: the issuer is not https or resolves to a non-public address"))
    def put(self, data: dict[str, Any]):
        """Configure (or replace) the account's OpenID provider: issuer, client, the claim → role
        mapping and whether a first sign-in creates the user.

        The client secret is stored encrypted and never returned; omit it to keep the stored one.
        Register the answer's ``redirect_uri`` at the provider."""
        with tenant_db() as db:
            return sso_config.answer(sso_config.put(db, current_identity().account_id, data))

    @require_admin
    @blp.response(204)
    @blp.alt_response(404, schema=ErrorSchema, description="sso_not_configured")
    def delete(self):
        """Remove single sign-on. Users it created stay (with no usable password until an
        admin sets one); their current sessions are not ended."""
        with tenant_db() as db:
            sso_config.delete(db, current_identity().account_id)
        return None
