"""GET /api/lcr/explain?number=...: the caller's routing decision for a number (admin), in the
tenant's view: platform infrastructure hidden (``app.routing.explain.tenant_view``)."""
from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.common import require_admin
from app.api.security import current_identity
from app.routing.explain import explain_for_tenant

blp = Blueprint("lcr_explain", __name__, url_prefix="/api/lcr",
                description="Explain least-cost routing for a number")


class ExplainQuerySchema(ma.Schema):
    number = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64))


class _PlanSchema(ma.Schema):
    id = ma.fields.String()
    name = ma.fields.String()
    level = ma.fields.String(metadata={"description": "account | platform"})


class _RouteSchema(ma.Schema):
    id = ma.fields.String()
    regex = ma.fields.String()


class _AttemptSchema(ma.Schema):
    carrierId = ma.fields.String()
    carrier = ma.fields.String()
    gatewayId = ma.fields.String(allow_none=True)
    gateway = ma.fields.String(allow_none=True)
    host = ma.fields.String(allow_none=True)
    endpoint = ma.fields.String(allow_none=True)
    platform = ma.fields.Boolean()


class _SkippedSchema(ma.Schema):
    kind = ma.fields.String(metadata={"description": "carrier | gateway"})
    id = ma.fields.String(allow_none=True)
    name = ma.fields.String(allow_none=True)
    reason = ma.fields.String()


class ExplainSchema(ma.Schema):
    """The tenant's view of the decision (docs/api.md "GET /api/lcr/explain")."""

    number = ma.fields.String()
    normalized = ma.fields.String(allow_none=True)
    plansConsidered = ma.fields.List(ma.fields.String())
    plan = ma.fields.Nested(_PlanSchema, allow_none=True)
    route = ma.fields.Nested(_RouteSchema, allow_none=True)
    attempts = ma.fields.List(ma.fields.Nested(_AttemptSchema))
    skipped = ma.fields.List(ma.fields.Nested(_SkippedSchema))
    bridge = ma.fields.String(allow_none=True)
    reason = ma.fields.String(allow_none=True)
    platformDetailsHidden = ma.fields.Boolean()
    gatewayHealthKnown = ma.fields.Boolean()


@blp.route("/explain")
class Explain(MethodView):
    @require_admin
    @blp.arguments(ExplainQuerySchema, location="query")
    @blp.response(200, ExplainSchema)
    def get(self, query: dict[str, Any]):
        """Plan, route, carriers/gateways in try order and what was skipped (with reasons).
        Always 200: an unroutable number is an answer (``attempts`` empty, ``reason`` set).

        Platform carriers show as tried (id, name, order, why skipped) without their gateways'
        ids, names, addresses or the bridge string; the account's own carriers show in full."""
        body, health_known = explain_for_tenant(query["number"], current_identity().account_id)
        body["gatewayHealthKnown"] = health_known
        return body
