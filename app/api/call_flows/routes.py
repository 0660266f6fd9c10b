"""/api/call-flows CRUD (admin session)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.call_flows import checks, service
from app.api.call_flows.schemas import (
    CallFlowPatchSchema,
    CallFlowSchema,
    CallFlowWriteSchema,
    FlowCheckSchema,
    FlowVerdictSchema,
)
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.security import current_identity, tenant_db

blp = Blueprint("call_flows", __name__, url_prefix="/api/call-flows", description="Call flows")


@blp.route("")
class CallFlows(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(CallFlowSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(CallFlowWriteSchema)
    @blp.response(201, CallFlowSchema)
    def post(self, data: dict[str, Any]):
        """Create a flow; the whole graph is validated (422 flow_invalid listing every problem)."""
        with tenant_db() as db:
            return service.create(db, current_identity().account_id, data)


@blp.route("/<uuid:flow_id>")
class CallFlowById(MethodView):
    @require_admin
    @blp.response(200, CallFlowSchema)
    def get(self, flow_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id, flow_id)

    @require_admin
    @blp.arguments(CallFlowPatchSchema(partial=True))
    @blp.response(200, CallFlowSchema)
    def patch(self, data: dict[str, Any], flow_id: uuid.UUID):
        with tenant_db() as db:
            return service.update(db, current_identity().account_id, flow_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, flow_id: uuid.UUID):
        """Delete; 409 call_flow_in_use while an application or a number's saved flow uses it."""
        with tenant_db() as db:
            service.delete(db, current_identity().account_id, flow_id)
        return None


@blp.route("/validate")
class ValidateFlow(MethodView):
    @require_admin
    @blp.arguments(FlowCheckSchema)
    @blp.response(200, FlowVerdictSchema)
    def post(self, data: dict[str, Any]):
        """Check a flow definition without saving it: the flow engine's parser and the save's URL
        guard. 200 either way; errors are the details 422 flow_invalid would carry."""
        return checks.check_flow(data["definition"])
