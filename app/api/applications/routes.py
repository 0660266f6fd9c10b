"""/api/applications CRUD (admin session)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.applications import checks, service, trial
from app.api.applications.schemas import (
    ApplicationPatchSchema,
    ApplicationSchema,
    ApplicationWriteSchema,
    TryQuerySchema,
    TryResultSchema,
    VerbListCheckSchema,
    VerbListVerdictSchema,
)
from app.api.common import ListQuerySchema, page_schema, require_admin
from app.api.security import current_identity, tenant_db

blp = Blueprint("applications", __name__, url_prefix="/api/applications", description="Applications")


@blp.route("")
class Applications(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(ApplicationSchema))
    def get(self, query: dict[str, Any]):
        """List applications (cursor pagination, oldest first)."""
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(ApplicationWriteSchema)
    @blp.response(201, ApplicationSchema)
    def post(self, data: dict[str, Any]):
        """Create an application."""
        with tenant_db() as db:
            return service.create(db, current_identity().account_id, data)


@blp.route("/<uuid:application_id>")
class ApplicationById(MethodView):
    @require_admin
    @blp.response(200, ApplicationSchema)
    def get(self, application_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id, application_id)

    @require_admin
    @blp.arguments(ApplicationPatchSchema(partial=True))
    @blp.response(200, ApplicationSchema)
    def patch(self, data: dict[str, Any], application_id: uuid.UUID):
        """Change some fields; omitted fields keep their value, null clears an optional one."""
        with tenant_db() as db:
            return service.update(db, current_identity().account_id, application_id, data)

    @require_admin
    @blp.response(204)
    def delete(self, application_id: uuid.UUID):
        """Delete; refused with 409 application_in_use while phone numbers point at it."""
        with tenant_db() as db:
            service.delete(db, current_identity().account_id, application_id)
        return None


@blp.route("/validate")
class ValidateAppJson(MethodView):
    @require_admin
    @blp.arguments(VerbListCheckSchema)
    @blp.response(200, VerbListVerdictSchema)
    def post(self, data: dict[str, Any]):
        """Check an app_json verb list without saving it: the parser the save and the controller
        run, plus the save's URL guard. 200 either way; each error has its JSON Pointer."""
        return checks.check_verb_list(data["app_json"])


@blp.route("/<uuid:application_id>/try")
class TryApplication(MethodView):
    @require_admin
    @blp.arguments(TryQuerySchema)
    @blp.response(200, TryResultSchema)
    def post(self, data: dict[str, Any], application_id: uuid.UUID):
        """What `sbc webhook try` shows, for the saved call_hook_url: the first request of a test
        call (signed and authenticated as the application's calls are), sent once, and the steps
        the call would run. 409 no_call_hook / call_hook_is_websocket."""
        with tenant_db() as db:
            prepared = trial.prepare(db, current_identity().account_id, application_id, data)
        return trial.run(prepared)
