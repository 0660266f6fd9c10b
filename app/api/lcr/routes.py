"""/api/lcr plans, /api/lcr/:id/routes, /api/lcr/routes/:id, /api/lcr/routes/:id/carriers (admin)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.lcr import service
from app.api.lcr.schemas import (
    EntryPatchSchema,
    EntrySchema,
    EntryWriteSchema,
    LcrPatchSchema,
    LcrSchema,
    LcrWriteSchema,
    RoutePatchSchema,
    RouteSchema,
    RouteWriteSchema,
)
from app.api.pagination import unpaged
from app.api.security import current_identity, tenant_db

blp = Blueprint("lcr", __name__, url_prefix="/api/lcr", description="Least-cost routing plans")


def _account() -> uuid.UUID:
    return current_identity().account_id


@blp.route("")
class Plans(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(LcrSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            page = service.list_plans(db, _account(), cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(LcrWriteSchema)
    @blp.response(201, LcrSchema)
    def post(self, data: dict[str, Any]):
        with tenant_db() as db:
            return service.create_plan(db, _account(), data)


@blp.route("/<uuid:lcr_id>")
class PlanById(MethodView):
    @require_admin
    @blp.response(200, LcrSchema)
    def get(self, lcr_id: uuid.UUID):
        with tenant_db() as db:
            return service.get_plan(db, _account(), lcr_id)

    @require_admin
    @blp.arguments(LcrPatchSchema(partial=True))
    @blp.response(200, LcrSchema)
    def patch(self, data: dict[str, Any], lcr_id: uuid.UUID):
        with tenant_db() as db:
            return service.update_plan(db, _account(), lcr_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, lcr_id: uuid.UUID):
        """Delete the plan with its routes and carrier sets."""
        with tenant_db() as db:
            service.delete_plan(db, _account(), lcr_id)
        return None


@blp.route("/<uuid:lcr_id>/routes")
class PlanRoutes(MethodView):
    @require_admin
    @blp.response(200, RouteSchema(many=True))
    @unpaged
    def get(self, lcr_id: uuid.UUID):
        """Routes of the plan in the order the router tries them (priority ascending)."""
        with tenant_db() as db:
            return service.list_routes(db, _account(), lcr_id)

    @require_admin
    @blp.arguments(RouteWriteSchema)
    @blp.response(201, RouteSchema)
    def post(self, data: dict[str, Any], lcr_id: uuid.UUID):
        """Add a route; 422 invalid_route_regex when the regex does not compile."""
        with tenant_db() as db:
            return service.create_route(db, _account(), lcr_id, data)


@blp.route("/routes/<uuid:route_id>")
class RouteById(MethodView):
    @require_admin
    @blp.response(200, RouteSchema)
    def get(self, route_id: uuid.UUID):
        with tenant_db() as db:
            return service.get_route(db, _account(), route_id)

    @require_admin
    @blp.arguments(RoutePatchSchema(partial=True))
    @blp.response(200, RouteSchema)
    def patch(self, data: dict[str, Any], route_id: uuid.UUID):
        with tenant_db() as db:
            return service.update_route(db, _account(), route_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, route_id: uuid.UUID):
        with tenant_db() as db:
            service.delete_route(db, _account(), route_id)
        return None


@blp.route("/routes/<uuid:route_id>/carriers")
class RouteCarriers(MethodView):
    @require_admin
    @blp.response(200, EntrySchema(many=True))
    @unpaged
    def get(self, route_id: uuid.UUID):
        """The carrier set in failover order: priority ascending, workload descending."""
        with tenant_db() as db:
            return service.list_entries(db, _account(), route_id)

    @require_admin
    @blp.arguments(EntryWriteSchema)
    @blp.response(201, EntrySchema)
    def post(self, data: dict[str, Any], route_id: uuid.UUID):
        with tenant_db() as db:
            return service.add_entry(db, _account(), route_id, data)


@blp.route("/routes/<uuid:route_id>/carriers/<uuid:entry_id>")
class RouteCarrierById(MethodView):
    @require_admin
    @blp.arguments(EntryPatchSchema)
    @blp.response(200, EntrySchema)
    def patch(self, data: dict[str, Any], route_id: uuid.UUID, entry_id: uuid.UUID):
        with tenant_db() as db:
            return service.update_entry(db, _account(), route_id, entry_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, route_id: uuid.UUID, entry_id: uuid.UUID):
        with tenant_db() as db:
            service.delete_entry(db, _account(), route_id, entry_id)
        return None
