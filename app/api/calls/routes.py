"""/api/calls — license ``programmable-voice``, admin session."""
from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.calls import service
from app.api.calls.schemas import CallCreateSchema, CallQueuedSchema
from app.api.common import require_admin
from app.api.security import current_identity, require_license, tenant_db

blp = Blueprint("calls", __name__, url_prefix="/api/calls", description="Outbound calls")


@blp.route("")
class Calls(MethodView):
    @require_admin
    @require_license("programmable-voice")
    @blp.arguments(CallCreateSchema)
    @blp.response(202, CallQueuedSchema)
    def post(self, data: dict[str, Any]):
        """Dial ``to`` through least-cost routing as ``from``; when answered, ``applicationSid``
        drives the call like an inbound one (webhook ``direction: outbound``). The outcome
        arrives as events (``call.started``/``call.failed``/``call.ended``) and a call record."""
        with tenant_db() as db:
            return service.place_call(db, current_identity().account_id, data)
