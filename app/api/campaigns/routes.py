"""/api/campaigns and /api/campaigns/:id/contacts (admin session). Definitions only: no dialer."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.campaigns import service
from app.api.campaigns.schemas import (
    CampaignPatchSchema,
    CampaignSchema,
    CampaignWriteSchema,
    ContactListQuerySchema,
    ContactSchema,
    ContactsCreatedSchema,
    ContactsCreateSchema,
)
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.security import current_identity, tenant_db

blp = Blueprint("campaigns", __name__, url_prefix="/api/campaigns", description="Outbound campaigns (definitions)")


def _account() -> uuid.UUID:
    return current_identity().account_id


@blp.route("")
class Campaigns(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(CampaignSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            page = service.list_page(db, _account(), cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(CampaignWriteSchema)
    @blp.response(201, CampaignSchema)
    def post(self, data: dict[str, Any]):
        with tenant_db() as db:
            return service.create(db, _account(), data)


@blp.route("/<uuid:campaign_id>")
class CampaignById(MethodView):
    @require_admin
    @blp.response(200, CampaignSchema)
    def get(self, campaign_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, _account(), campaign_id)

    @require_admin
    @blp.arguments(CampaignPatchSchema(partial=True))
    @blp.response(200, CampaignSchema)
    def patch(self, data: dict[str, Any], campaign_id: uuid.UUID):
        with tenant_db() as db:
            return service.update(db, _account(), campaign_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, campaign_id: uuid.UUID):
        """Delete the campaign and its contacts."""
        with tenant_db() as db:
            service.delete(db, _account(), campaign_id)
        return None


@blp.route("/<uuid:campaign_id>/contacts")
class CampaignContacts(MethodView):
    @require_admin
    @blp.arguments(ContactListQuerySchema, location="query")
    @blp.response(200, page_schema(ContactSchema))
    def get(self, query: dict[str, Any], campaign_id: uuid.UUID):
        with tenant_db() as db:
            page = service.list_contacts(db, _account(), campaign_id, cursor=query["cursor"],
                                         limit=query["limit"], status=query.get("status"))
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(ContactsCreateSchema)
    @blp.response(201, ContactsCreatedSchema)
    def post(self, data: dict[str, Any], campaign_id: uuid.UUID):
        """Add up to 1000 contacts in one all-or-nothing request."""
        with tenant_db() as db:
            rows = service.add_contacts(db, _account(), campaign_id, data["contacts"])
        return {"created": len(rows), "items": rows}


@blp.route("/<uuid:campaign_id>/contacts/<uuid:contact_id>")
class CampaignContactById(MethodView):
    @require_admin
    @blp.response(204)
    def delete(self, campaign_id: uuid.UUID, contact_id: uuid.UUID):
        with tenant_db() as db:
            service.delete_contact(db, _account(), campaign_id, contact_id)
        return None
