"""/api/applications CRUD (admin session)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.applications import service
from app.api.applications.schemas import ApplicationPatchSchema, ApplicationSchema, ApplicationWriteSchema
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.security import current_identity, tenant_db

blp = Blueprint("applications", __name__, url_prefix="/api/applications", description="Applications")


@blp.route("")
class Applications(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(ApplicationSchema))
    def get(self, query: dict[str, Any]):
        """List applications (cursor pagination, oldest first)."""
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(ApplicationWriteSchema)
    @blp.response(201, ApplicationSchema)
    def post(self, data: dict[str, Any]):
        """Create an application."""
        with tenant_db() as db:
            return service.create(db, current_identity().account_id, data)


@blp.route("/<uuid:application_id>")
class ApplicationById(MethodView):
    @require_admin
    @blp.response(200, ApplicationSchema)
    def get(self, application_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id, application_id)

    @require_admin
    @blp.arguments(ApplicationPatchSchema(partial=True))
    @blp.response(200, ApplicationSchema)
    def patch(self, data: dict[str, Any], application_id: uuid.UUID):
        """Change some fields; omitted fields keep their value, null clears an optional one."""
        with tenant_db() as db:
            return service.update(db, current_identity().account_id, application_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, application_id: uuid.UUID):
        """Delete; refused with 409 application_in_use while phone numbers point at it."""
        with tenant_db() as db:
            service.delete(db, current_identity().account_id, application_id)
        return None
