"""/api/do-not-call: list, add (JSON or CSV upload), remove (admin session)."""
from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app import limits
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.csv_upload import documented_csv_upload, uploaded_rows
from app.api.do_not_call import service
from app.api.do_not_call.schemas import DncAddedSchema, DncCreateSchema, DncSchema
from app.api.errors import ErrorSchema
from app.api.security import current_identity, tenant_db

blp = Blueprint("do_not_call", __name__, url_prefix="/api/do-not-call", description="Do-not-call list")


@blp.route("")
class DncList(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(DncSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(DncCreateSchema)
    @blp.response(201, DncAddedSchema)
    def post(self, data: dict[str, Any]):
        """Add up to ``DNC_JSON_MAX`` (1000) numbers, all or nothing (bad items named by index)."""
        with tenant_db() as db:
            added = service.add(db, current_identity().account_id, list(enumerate(data["numbers"])), source="numbers")
        return {"added": added}


@blp.route("/import")
class DncCsv(MethodView):
    @require_admin
    @blp.response(201, DncAddedSchema)
    @documented_csv_upload(blp)
    def post(self):
        """Numbers as CSV (header: number, optional reason), at most ``CAMPAIGN_CSV_MAX_ROWS``
        (10,000) rows; all or nothing."""
        rows = uploaded_rows(required="number", max_rows=limits.CAMPAIGN_CSV_MAX_ROWS)
        with tenant_db() as db:
            added = service.add(db, current_identity().account_id, rows, source="rows")
        return {"added": added}


@blp.route("/<string:number>")
class DncByNumber(MethodView):
    @require_admin
    @blp.response(204)
    @blp.alt_response(404, schema=ErrorSchema, description="dnc_number_not_found")
    def delete(self, number: str):
        with tenant_db() as db:
            service.remove(db, current_identity().account_id, number)
        return None
