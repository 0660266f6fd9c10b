"""/api/phone-numbers CRUD and /api/phone-numbers/:id/answering (admin session)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.common import page_schema, require_admin
from app.api.phone_numbers import answering, service
from app.api.phone_numbers.schemas import (
    AnsweringSchema,
    AnsweringWriteSchema,
    PhoneNumberCreateSchema,
    PhoneNumberListQuerySchema,
    PhoneNumberPatchSchema,
    PhoneNumberSchema,
)
from app.api.security import current_identity, tenant_db

blp = Blueprint("phone_numbers", __name__, url_prefix="/api/phone-numbers", description="Phone numbers")


@blp.route("")
class PhoneNumbers(MethodView):
    @require_admin
    @blp.arguments(PhoneNumberListQuerySchema, location="query")
    @blp.response(200, page_schema(PhoneNumberSchema))
    def get(self, query: dict[str, Any]):
        """List the account's numbers, by number; ``number`` searches by part of the number."""
        with tenant_db() as db:
            account_id = current_identity().account_id
            page = service.list_page(db, account_id, cursor=query["cursor"], limit=query["limit"],
                                     containing=query["number"])
            return page.to_dict(service.views(db, account_id, list(page.items)))

    @require_admin
    @blp.arguments(PhoneNumberCreateSchema)
    @blp.response(201, PhoneNumberSchema)
    def post(self, data: dict[str, Any]):
        """Add a number (answering settings are set afterwards, on the saved number)."""
        with tenant_db() as db:
            account_id = current_identity().account_id
            return service.view(db, account_id, service.create(db, account_id, data))


@blp.route("/<uuid:number_id>")
class PhoneNumberById(MethodView):
    @require_admin
    @blp.response(200, PhoneNumberSchema)
    def get(self, number_id: uuid.UUID):
        with tenant_db() as db:
            account_id = current_identity().account_id
            return service.view(db, account_id, service.get(db, account_id, number_id))

    @require_admin
    @blp.arguments(PhoneNumberPatchSchema)
    @blp.response(200, PhoneNumberSchema)
    def patch(self, data: dict[str, Any], number_id: uuid.UUID):
        """Point the number at another application of the account (or none)."""
        with tenant_db() as db:
            account_id = current_identity().account_id
            return service.view(db, account_id, service.update(db, account_id, number_id, data))

    @require_admin
    @blp.response(204)
    def delete(self, number_id: uuid.UUID):
        with tenant_db() as db:
            service.delete(db, current_identity().account_id, number_id)
        return None


@blp.route("/<uuid:number_id>/answering")
class Answering(MethodView):
    @require_admin
    @blp.response(200, AnsweringSchema)
    def get(self, number_id: uuid.UUID):
        """Current answering settings; ``available_modes`` lists what the license allows."""
        me = current_identity()
        with tenant_db() as db:
            return answering.view(db, me.account_id, number_id, me.licenses).to_dict()

    @require_admin
    @blp.arguments(AnsweringWriteSchema)
    @blp.response(200, AnsweringSchema)
    def put(self, data: dict[str, Any], number_id: uuid.UUID):
        """Choose ``call_flow`` or ``webhook`` (license programmable-voice) for this number."""
        me = current_identity()
        with tenant_db() as db:
            return answering.set_answering(db, me.account_id, number_id, data, me.licenses).to_dict()
