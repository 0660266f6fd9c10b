"""/api/users CRUD (admin session)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.security import current_identity, tenant_db
from app.api.users import service
from app.api.users.schemas import UserPatchSchema, UserSchema, UserWriteSchema

blp = Blueprint("users", __name__, url_prefix="/api/users", description="Users")


@blp.route("")
class Users(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(UserSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(UserWriteSchema)
    @blp.response(201, UserSchema)
    def post(self, data: dict[str, Any]):
        """Create a user; the password is stored as a bcrypt hash only."""
        with tenant_db() as db:
            return service.create(db, current_identity().account_id, data)


@blp.route("/<uuid:user_id>")
class UserById(MethodView):
    @require_admin
    @blp.response(200, UserSchema)
    def get(self, user_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id, user_id)

    @require_admin
    @blp.arguments(UserPatchSchema(partial=True))
    @blp.response(200, UserSchema)
    def patch(self, data: dict[str, Any], user_id: uuid.UUID):
        me = current_identity()
        with tenant_db() as db:
            return service.update(db, me.account_id, me.user_id, user_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, user_id: uuid.UUID):
        me = current_identity()
        with tenant_db() as db:
            service.delete(db, me.account_id, me.user_id, user_id)
        return None
