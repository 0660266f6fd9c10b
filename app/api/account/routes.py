"""/api/account (admin session)."""
from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.account import service
from app.api.account.schemas import AccountPatchSchema, AccountSchema
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
