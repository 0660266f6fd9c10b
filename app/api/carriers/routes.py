"""/api/carriers, /api/carriers/:id/gateways and /api/gateways/:id (admin session)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.carriers import service
from app.api.carriers.schemas import (
    CarrierPatchSchema,
    CarrierSchema,
    CarrierWriteSchema,
    GatewayPatchSchema,
    GatewaySchema,
    GatewayWriteSchema,
)
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.pagination import unpaged
from app.api.security import current_identity, tenant_db

blp = Blueprint("carriers", __name__, url_prefix="/api/carriers", description="Carriers (SIP trunks)")
gateways_blp = Blueprint("gateways", __name__, url_prefix="/api/gateways", description="Carrier gateways")


@blp.route("")
class Carriers(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(CarrierSchema))
    def get(self, query: dict[str, Any]):
        """The account's carriers and the platform's (read-only, ``platform: true``)."""
        with tenant_db() as db:
            page = service.list_carriers(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(CarrierWriteSchema)
    @blp.response(201, CarrierSchema)
    def post(self, data: dict[str, Any]):
        with tenant_db() as db:
            return service.create_carrier(db, current_identity().account_id, data)


@blp.route("/<uuid:carrier_id>")
class CarrierById(MethodView):
    @require_admin
    @blp.response(200, CarrierSchema)
    def get(self, carrier_id: uuid.UUID):
        with tenant_db() as db:
            return service.visible_carrier(db, current_identity().account_id, carrier_id)

    @require_admin
    @blp.arguments(CarrierPatchSchema(partial=True))
    @blp.response(200, CarrierSchema)
    def patch(self, data: dict[str, Any], carrier_id: uuid.UUID):
        with tenant_db() as db:
            return service.update_carrier(db, current_identity().account_id, carrier_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, carrier_id: uuid.UUID):
        """Delete the carrier with its gateways and LCR carrier-set entries."""
        with tenant_db() as db:
            service.delete_carrier(db, current_identity().account_id, carrier_id)
        return None


@blp.route("/<uuid:carrier_id>/gateways")
class CarrierGateways(MethodView):
    @require_admin
    @blp.response(200, GatewaySchema(many=True))
    @unpaged
    def get(self, carrier_id: uuid.UUID):
        with tenant_db() as db:
            return service.list_gateways(db, current_identity().account_id, carrier_id)

    @require_admin
    @blp.arguments(GatewayWriteSchema)
    @blp.response(201, GatewaySchema)
    def post(self, data: dict[str, Any], carrier_id: uuid.UUID):
        """Add a gateway: IPv4 + netmask (32 = exact host, less = CIDR, inbound only)."""
        with tenant_db() as db:
            return service.create_gateway(db, current_identity().account_id, carrier_id, data)


@gateways_blp.route("/<uuid:gateway_id>")
class GatewayById(MethodView):
    @require_admin
    @gateways_blp.response(200, GatewaySchema)
    def get(self, gateway_id: uuid.UUID):
        with tenant_db() as db:
            return service.get_gateway(db, current_identity().account_id, gateway_id)

    @require_admin
    @gateways_blp.arguments(GatewayPatchSchema(partial=True))
    @gateways_blp.response(200, GatewaySchema)
    def patch(self, data: dict[str, Any], gateway_id: uuid.UUID):
        with tenant_db() as db:
            return service.update_gateway(db, current_identity().account_id, gateway_id, data)

    @require_admin
    @gateways_blp.response(204)
    def delete(self, gateway_id: uuid.UUID):
        with tenant_db() as db:
            service.delete_gateway(db, current_identity().account_id, gateway_id)
        return None
