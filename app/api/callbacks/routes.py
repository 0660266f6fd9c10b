"""/api/queues/:queueId/callbacks — license ``queue-mgmt``; created by an admin session,
rescheduled and cancelled by admins and supervisors, read by those and the queue's agents
(app/api/callbacks/access.py says why)."""
from __future__ import annotations

import uuid
from typing import Any

from flask import jsonify
from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.callbacks import service
from app.api.callbacks.access import require_reader
from app.api.callbacks.schemas import (
    CallbackCreateSchema,
    CallbackListQuerySchema,
    CallbackRescheduleSchema,
    CallbacksCancelledSchema,
    CallbackSchema,
)
from app.api.common import require_admin, require_supervisor
from app.api.security import current_identity, require_license, tenant_db

blp = Blueprint(
    "callbacks", __name__, url_prefix="/api/queues/<uuid:queue_id>/callbacks",
    description="Queue callbacks",
)


@blp.route("")
class Callbacks(MethodView):
    @require_license("queue-mgmt")
    @blp.arguments(CallbackListQuerySchema, location="query")
    @blp.response(200, description=(
        "envelope=true: {items: [Callback], next_cursor}; default (v1): a bare array of Callback"))
    def get(self, query: dict[str, Any], queue_id: uuid.UUID):
        """List the queue's callbacks in dispatch order (priority desc, requested_at asc)."""
        me = current_identity()
        item = CallbackSchema()
        with tenant_db() as db:
            require_reader(db, me, queue_id)
            if query["envelope"]:
                page = service.callback_page(db, me.account_id, queue_id, status=query.get("status"),
                                             cursor=query["cursor"], limit=query["limit"])
                return jsonify(page.to_dict(item.dump(page.items, many=True)))
            rows = service.list_callbacks(
                db, me.account_id, queue_id,
                status=query.get("status"), limit=query["limit"], offset=query["offset"],
            )
            return jsonify(item.dump(rows, many=True))

    @require_license("queue-mgmt")
    @require_admin
    @blp.arguments(CallbackCreateSchema)
    @blp.response(201, CallbackSchema)
    def post(self, data: dict[str, Any], queue_id: uuid.UUID):
        """Request a callback (status ``pending``, 0 attempts; at most 3 dial attempts)."""
        me = current_identity()
        with tenant_db() as db:
            return service.create_callback(
                db, me.account_id, queue_id, me.user_id,
                phone_number=data["phone_number"], priority=data["priority"],
                requested_at=data.get("requested_at"), notes=data.get("notes"),
                scheduled_at=data.get("scheduled_at"),
            )

    @require_license("queue-mgmt")
    @require_supervisor
    @blp.response(200, CallbacksCancelledSchema)
    def delete(self, queue_id: uuid.UUID):
        """Cancel every pending callback of the queue."""
        me = current_identity()
        with tenant_db() as db:
            return {"cancelled": service.cancel_pending(db, me.account_id, queue_id)}


@blp.route("/<uuid:callback_id>")
class CallbackById(MethodView):
    @require_license("queue-mgmt")
    @blp.response(200, CallbackSchema)
    def get(self, queue_id: uuid.UUID, callback_id: uuid.UUID):
        """One callback of the queue."""
        me = current_identity()
        with tenant_db() as db:
            require_reader(db, me, queue_id)
            return service.get_callback(db, me.account_id, queue_id, callback_id)

    @require_license("queue-mgmt")
    @require_supervisor
    @blp.arguments(CallbackRescheduleSchema)
    @blp.response(200, CallbackSchema)
    def patch(self, data: dict[str, Any], queue_id: uuid.UUID, callback_id: uuid.UUID):
        """Reschedule a pending callback: ``scheduled_at`` (null: as soon as an agent is free)
        and/or ``priority``; 409 unless pending."""
        me = current_identity()
        with tenant_db() as db:
            return service.reschedule_callback(db, me.account_id, queue_id, callback_id, data)

    @require_license("queue-mgmt")
    @require_supervisor
    @blp.response(204)
    def delete(self, queue_id: uuid.UUID, callback_id: uuid.UUID):
        """Cancel one callback (kept with status ``cancelled``); 409 if dialling or finished."""
        me = current_identity()
        with tenant_db() as db:
            service.cancel_callback(db, me.account_id, queue_id, callback_id)
        return None
