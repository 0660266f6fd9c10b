"""/api/sip-targets — admin session. ``sip:`` dial targets are refused unless their host is
listed here (app/calls/sip_targets.py says why and what is checked again at dial time)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint
from sqlalchemy import select

from app.api.common import flush_or_raise, get_owned, require_admin
from app.api.pagination import unpaged
from app.api.security import current_identity, tenant_db
from app.api.sip_targets.schemas import SipTargetCreateSchema, SipTargetSchema
from app.calls.sip_targets import check_host_on_save
from app.models import SipTargetHost

blp = Blueprint("sip_targets", __name__, url_prefix="/api/sip-targets",
                description="Hosts the dial verb may reach with sip: targets")


@blp.route("")
class SipTargets(MethodView):
    @require_admin
    @blp.response(200, SipTargetSchema(many=True))
    @unpaged
    def get(self):
        """The listed hosts, alphabetically."""
        with tenant_db() as db:
            return list(db.scalars(select(SipTargetHost).where(
                SipTargetHost.account_id == current_identity().account_id).order_by(SipTargetHost.host)))

    @require_admin
    @blp.arguments(SipTargetCreateSchema)
    @blp.response(201, SipTargetSchema)
    def post(self, data: dict[str, Any]):
        """List a host (409 ``duplicate_sip_target`` if it already is)."""
        host = check_host_on_save(data["host"])
        with tenant_db() as db:
            row = SipTargetHost(id=uuid.uuid4(), account_id=current_identity().account_id, host=host)
            db.add(row)
            flush_or_raise(db, conflict="This host is already listed.", conflict_code="duplicate_sip_target")
            db.refresh(row)
            return row


@blp.route("/<uuid:target_id>")
class SipTargetById(MethodView):
    @require_admin
    @blp.response(204)
    def delete(self, target_id: uuid.UUID):
        """Remove a host: dials to it are refused from the next call on."""
        with tenant_db() as db:
            db.delete(get_owned(db, SipTargetHost, target_id, current_identity().account_id,
                                what="sip_target"))
        return None
