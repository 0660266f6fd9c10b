"""/api/queues CRUD — license queue-mgmt; changes by an admin session, reads by admins and
supervisors (they run the queues' day: the live view, the callbacks)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.common import ListQuerySchema, page_schema, require_admin, require_supervisor
from app.api.queues import service
from app.api.queues.schemas import QueuePatchSchema, QueueSchema, QueueWriteSchema
from app.api.security import current_identity, require_license, tenant_db

blp = Blueprint("queues", __name__, url_prefix="/api/queues", description="Queues")


@blp.route("")
class Queues(MethodView):
    @require_license("queue-mgmt")
    @require_supervisor
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(QueueSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_license("queue-mgmt")
    @require_admin
    @blp.arguments(QueueWriteSchema)
    @blp.response(201, QueueSchema)
    def post(self, data: dict[str, Any]):
        with tenant_db() as db:
            return service.create(db, current_identity().account_id, data)


@blp.route("/<uuid:queue_id>")
class QueueById(MethodView):
    @require_license("queue-mgmt")
    @require_supervisor
    @blp.response(200, QueueSchema)
    def get(self, queue_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id, queue_id)

    @require_license("queue-mgmt")
    @require_admin
    @blp.arguments(QueuePatchSchema(partial=True))
    @blp.response(200, QueueSchema)
    def patch(self, data: dict[str, Any], queue_id: uuid.UUID):
        with tenant_db() as db:
            return service.update(db, current_identity().account_id, queue_id, data)

    @require_license("queue-mgmt")
    @require_admin
    @blp.response(204)
    def delete(self, queue_id: uuid.UUID):
        """Delete the queue with its memberships and callbacks."""
        with tenant_db() as db:
            service.delete(db, current_identity().account_id, queue_id)
        return None
