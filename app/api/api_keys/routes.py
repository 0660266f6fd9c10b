"""/api/api-keys — license ``api-access``; create needs ``api_keys.create``, revoke ``api_keys.delete``."""
from __future__ import annotations

import uuid
from typing import Any

from flask import jsonify
from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.api_keys import service
from app.api.api_keys.schemas import (
    ApiKeyCreatedSchema,
    ApiKeyCreateSchema,
    ApiKeyListQuerySchema,
    ApiKeySchema,
)
from app.api.security import current_identity, require_license, require_permission, tenant_db

blp = Blueprint("api_keys", __name__, url_prefix="/api/api-keys", description="API keys")


@blp.route("")
class ApiKeys(MethodView):
    @require_license("api-access")
    @blp.arguments(ApiKeyListQuerySchema, location="query")
    @blp.response(200, description=(
        "envelope=true: {items: [ApiKey], next_cursor}; default (v1): a bare array of ApiKey"))
    def get(self, query: dict[str, Any]):
        """List the account's API keys (never the keys themselves), newest first."""
        me = current_identity()
        item = ApiKeySchema()
        with tenant_db() as db:
            if query["envelope"]:
                page = service.key_page(db, me.account_id, include_revoked=query["include_revoked"],
                                        cursor=query["cursor"], limit=query["limit"])
                return jsonify(page.to_dict(item.dump(page.items, many=True)))
            rows = service.list_keys(db, me.account_id, include_revoked=query["include_revoked"])
            return jsonify(item.dump(rows, many=True))

    @require_license("api-access")
    @require_permission("api_keys.create")
    @blp.arguments(ApiKeyCreateSchema)
    @blp.response(201, ApiKeyCreatedSchema)
    def post(self, data: dict[str, Any]):
        """Create a key; the response is the only place the full key is ever shown."""
        me = current_identity()
        with tenant_db() as db:
            created = service.create_key(
                db, me.account_id, me.user_id,
                name=data.get("name"), scopes=data["scopes"], expires_at=data.get("expires_at"),
            )
        body = {name: getattr(created.row, name) for name in ApiKeySchema().fields}
        body["key"] = created.key
        return body


@blp.route("/<uuid:api_key_id>")
class ApiKeyById(MethodView):
    @require_license("api-access")
    @require_permission("api_keys.delete")
    @blp.response(204)
    def delete(self, api_key_id: uuid.UUID):
        """Revoke a key. Idempotent; the row stays (with ``revoked_at``) for audit."""
        me = current_identity()
        with tenant_db() as db:
            service.revoke_key(db, me.account_id, api_key_id)
        return None
