"""/api/account (admin session)."""
from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.account import service
from app.api.account.schemas import AccountMfaSchema, AccountPatchSchema, AccountSchema
from app.api.common import require_admin
from app.api.security import current_identity, tenant_db

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
