"""/api/campaigns, their state actions, contacts (JSON and CSV) and dispositions (admin session)."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from flask import Response, request
from flask.views import MethodView
from flask_smorest import Blueprint

from app import limits
from app.api.campaigns import service
from app.api.campaigns.schemas import (
    CampaignFiguresSchema,
    CampaignPatchSchema,
    CampaignSchema,
    CampaignWriteSchema,
    ContactListQuerySchema,
    ContactSchema,
    ContactsCreatedSchema,
    ContactsCreateSchema,
    ContactsImportedSchema,
    DispositionSchema,
    StartSchema,
)
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.csv_upload import documented_csv_upload, uploaded_rows
from app.api.errors import ErrorSchema
from app.api.security import current_identity, tenant_db
from app.campaigns import contacts as contact_rules
from app.errors import ValidationFailed
from app.exports import campaign_contacts

blp = Blueprint("campaigns", __name__, url_prefix="/api/campaigns", description="Outbound campaigns")

# the state actions of the API (app/campaigns/states.py); the URL converter accepts only these
ACTIONS = ("start", "pause", "resume", "stop", "archive")
_INVALID = ("validation_failed, caller_id_not_owned, invalid_reference; amd_message_required (amd message "
            "without amd_message), invalid_amd_message (not one say or play verb, nor {audio: name}), "
            "unknown_audio (no uploaded audio of that name)")


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
    @blp.alt_response(422, schema=ErrorSchema, description=_INVALID)
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
    @blp.alt_response(409, schema=ErrorSchema, description="illegal_transition: status is not a legal next state")
    @blp.alt_response(422, schema=ErrorSchema, description=_INVALID)
    def patch(self, data: dict[str, Any], campaign_id: uuid.UUID):
        with tenant_db() as db:
            return service.update(db, _account(), campaign_id, data)

    @require_admin
    @blp.response(204)
    @blp.alt_response(409, schema=ErrorSchema, description="campaign_active: stop it first")
    def delete(self, campaign_id: uuid.UUID):
        """Delete the campaign and its contacts (not while scheduled, running or paused)."""
        with tenant_db() as db:
            service.delete(db, _account(), campaign_id)
        return None


@blp.route(f"/<uuid:campaign_id>/<any({', '.join(ACTIONS)}):action>")
class CampaignAction(MethodView):
    @require_admin
    @blp.arguments(StartSchema)
    @blp.response(200, CampaignSchema)
    @blp.alt_response(409, schema=ErrorSchema, description="illegal_transition: not from the current status")
    @blp.alt_response(422, schema=ErrorSchema, description="campaign_not_ready: no trunk, caller ID or agents")
    def post(self, data: dict[str, Any], campaign_id: uuid.UUID, action: str):
        """``action`` is one of start (optional ``at``: schedule), pause, resume, stop, archive.
        Pause and stop end no live call: only new attempts stop."""
        if data["at"] is not None and action != "start":
            raise ValidationFailed("Only start takes a time.", details={"at": ["Only with start."]})
        with tenant_db() as db:
            return service.transition(db, _account(), campaign_id, action, at=data["at"])


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
        """Add up to ``CAMPAIGN_CONTACTS_JSON_MAX`` (1000) contacts in one all-or-nothing request;
        a bad item is named by its index in ``details.contacts``."""
        with tenant_db() as db:
            rows = service.add_contacts(db, _account(), campaign_id, list(enumerate(data["contacts"])),
                                        source="contacts")
        return {"created": len(rows), "items": rows}


@blp.route("/<uuid:campaign_id>/contacts/import")
class CampaignContactsCsv(MethodView):
    @require_admin
    @blp.response(201, ContactsImportedSchema)
    @documented_csv_upload(blp)
    def post(self, campaign_id: uuid.UUID):
        """Contacts as CSV (header: phone_number, optional name and time_zone; other columns are
        attributes), at most ``CAMPAIGN_CSV_MAX_ROWS`` (10,000) rows; all or nothing."""
        rows = uploaded_rows(required="phone_number", max_rows=limits.CAMPAIGN_CSV_MAX_ROWS)
        items = [(line, contact_rules.from_csv_row(values)) for line, values in rows]
        with tenant_db() as db:
            created = service.add_contacts(db, _account(), campaign_id, items, source="rows")
        return {"created": len(created)}


@blp.route("/<uuid:campaign_id>/figures")
class CampaignFigures(MethodView):
    @require_admin
    @blp.response(200, CampaignFiguresSchema)
    def get(self, campaign_id: uuid.UUID):
        """Live figures: attempts per outcome, the abandon rate against the cap, the agents of
        the agent groups (waiting, busy, wrap-up) and the contacts left (docs/campaigns.md)."""
        with tenant_db() as db:
            return service.figures(db, _account(), campaign_id)


@blp.route("/<uuid:campaign_id>/contacts/export")
class CampaignContactsExport(MethodView):
    @require_admin
    @blp.response(200, content_type="text/csv", description=(
        "CSV, one row per contact, oldest first; cells safe against formula injection; logged to the compliance log"))
    def get(self, campaign_id: uuid.UUID):
        """The contacts' outcomes: status, attempts, skips, last outcome, disposition and times."""
        with tenant_db() as db:
            service.get(db, _account(), campaign_id)
        me = current_identity()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        return Response(
            campaign_contacts.stream(me.account_id, me.user_id, campaign_id, request.remote_addr),
            mimetype="text/csv",
            headers={"Content-Disposition": f'attachment; filename="campaign-{campaign_id}-contacts-{stamp}.csv"',
                     "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})


@blp.route("/<uuid:campaign_id>/contacts/<uuid:contact_id>")
class CampaignContactById(MethodView):
    @require_admin
    @blp.response(204)
    def delete(self, campaign_id: uuid.UUID, contact_id: uuid.UUID):
        with tenant_db() as db:
            service.delete_contact(db, _account(), campaign_id, contact_id)
        return None


@blp.route("/<uuid:campaign_id>/contacts/<uuid:contact_id>/disposition")
class CampaignContactDisposition(MethodView):
    @require_admin
    @blp.arguments(DispositionSchema)
    @blp.response(200, ContactSchema)
    def put(self, data: dict[str, Any], campaign_id: uuid.UUID, contact_id: uuid.UUID):
        """Record the agent's disposition (wrap-up code) and note on the contact."""
        with tenant_db() as db:
            return service.set_disposition(db, _account(), campaign_id, contact_id, data["disposition"], data["note"])
