"""/api/call-records: list, detail by public id, and the CSV export. All need recordings.view.

Unknown query parameters are refused (422), not ignored: a mistyped filter must not silently
turn into an export of every record."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

import marshmallow as ma
from flask import Response, request
from flask.views import MethodView
from flask_smorest import Blueprint

from app import limits
from app.api.call_records import service
from app.api.call_records.schemas import (
    CallRecordDetailSchema,
    CallRecordExportQuerySchema,
    CallRecordListQuerySchema,
    CallRecordSchema,
)
from app.api.common import page_schema
from app.api.security import current_identity, require_permission, tenant_db
from app.exports.call_records import ExportRequest, stream_export
from app.exports.filters import CallRecordFilters

blp = Blueprint("call_records", __name__, url_prefix="/api/call-records", description="Call records")


@blp.route("")
class CallRecords(MethodView):
    @require_permission("recordings.view")
    @blp.arguments(CallRecordListQuerySchema, location="query", unknown=ma.RAISE)
    @blp.response(200, page_schema(CallRecordSchema))
    def get(self, query: dict[str, Any]):
        """Newest first; filter by time range, direction, agent, queue, status."""
        filters = CallRecordFilters.from_query(query)
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, filters,
                                     cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)


@blp.route("/export")
class CallRecordsExport(MethodView):
    @require_permission("recordings.view")
    @blp.arguments(CallRecordExportQuerySchema, location="query", unknown=ma.RAISE)
    @blp.response(200, content_type="text/csv", description=(
        f"CSV, at most {limits.CSV_EXPORT_MAX_ROWS} rows, newest first; logged to the compliance log"))
    def get(self, query: dict[str, Any]):
        """Stream the CSV export (same filters as the list)."""
        me = current_identity()
        export = ExportRequest(account_id=me.account_id, user_id=me.user_id,
                               filters=CallRecordFilters.from_query(query),
                               remote_addr=request.remote_addr, indicators=query["indicators"])
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        return Response(
            stream_export(export),
            mimetype="text/csv",
            headers={
                "Content-Disposition": f'attachment; filename="call-records-{stamp}.csv"',
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
                "X-Export-Row-Limit": str(limits.CSV_EXPORT_MAX_ROWS),
            },
        )


@blp.route("/<uuid:public_id>")
class CallRecordById(MethodView):
    @require_permission("recordings.view")
    @blp.response(200, CallRecordDetailSchema)
    def get(self, public_id: uuid.UUID):
        """One record by its public id, with the interaction summary of its conversation."""
        with tenant_db() as db:
            return service.detail(db, current_identity().account_id, public_id)
