"""/api/agents CRUD — license queue-mgmt, admin session."""
from __future__ import annotations

import uuid
from typing import Any

import marshmallow as ma
from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.agents import service
from app.api.agents.schemas import (
    AgentPatchSchema,
    AgentSchema,
    AgentStateSchema,
    AgentWriteSchema,
    SipCredentialsSchema,
)
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.security import current_identity, require_license, tenant_db

blp = Blueprint("agents", __name__, url_prefix="/api/agents", description="Agents")


class AgentListQuerySchema(ListQuerySchema):
    queue_id = ma.fields.UUID(metadata={"description": "Only members of this queue"})


@blp.route("")
class Agents(MethodView):
    @require_license("queue-mgmt")
    @require_admin
    @blp.arguments(AgentListQuerySchema, location="query")
    @blp.response(200, page_schema(AgentSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            return service.list_page(db, current_identity().account_id, cursor=query["cursor"],
                                     limit=query["limit"], queue_id=query.get("queue_id"))

    @require_license("queue-mgmt")
    @require_admin
    @blp.arguments(AgentWriteSchema)
    @blp.response(201, AgentSchema)
    def post(self, data: dict[str, Any]):
        """Make a user an agent, optionally in some queues."""
        with tenant_db() as db:
            return service.create(db, current_identity().account_id, data)


@blp.route("/<uuid:agent_id>")
class AgentById(MethodView):
    @require_license("queue-mgmt")
    @require_admin
    @blp.response(200, AgentSchema)
    def get(self, agent_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id, agent_id)

    @require_license("queue-mgmt")
    @require_admin
    @blp.arguments(AgentPatchSchema)
    @blp.response(200, AgentSchema)
    def patch(self, data: dict[str, Any], agent_id: uuid.UUID):
        with tenant_db() as db:
            return service.update(db, current_identity().account_id, agent_id, data)

    @require_license("queue-mgmt")
    @require_admin
    @blp.response(204)
    def delete(self, agent_id: uuid.UUID):
        with tenant_db() as db:
            service.delete(db, current_identity().account_id, agent_id)
        return None


@blp.route("/me/state")
class MyState(MethodView):
    @require_license("queue-mgmt")
    @blp.arguments(AgentStateSchema)
    @blp.response(200, AgentSchema)
    def put(self, data: dict[str, Any]):
        """The signed-in user's own agent state (agent.state.changed on every change)."""
        identity = current_identity()
        with tenant_db() as db:
            return service.set_my_state(db, identity.account_id, identity.user_id, data)


@blp.route("/<uuid:agent_id>/state")
class AgentState(MethodView):
    @require_license("queue-mgmt")
    @require_admin
    @blp.arguments(AgentStateSchema)
    @blp.response(200, AgentSchema)
    def put(self, data: dict[str, Any], agent_id: uuid.UUID):
        """Set any agent's state (admin)."""
        with tenant_db() as db:
            return service.set_state(db, current_identity().account_id, agent_id, data)


@blp.route("/<uuid:agent_id>/sip-credentials")
class AgentSipCredentials(MethodView):
    @require_license("queue-mgmt")
    @require_admin
    @blp.response(201, SipCredentialsSchema)
    def post(self, agent_id: uuid.UUID):
        """Generate new SIP credentials for the internal profile; the password is shown in
        this reply only (stored encrypted). Replaces the previous password."""
        with tenant_db() as db:
            return service.new_sip_credentials(db, current_identity().account_id, agent_id)
