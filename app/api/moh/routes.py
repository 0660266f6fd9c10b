"""/api/moh: list, upload (``PUT /api/moh/:name`` with the raw WAV or MP3 as the body) and
delete an account's hold music. Admin session and license ``queue-mgmt``, as the queues that
play it. The files live under ``<moh.dir>/<account>/`` (app/media/moh_uploads.py); the body
is exempt from the JSON-only guard by ``app.api.raw_uploads`` (this route, these types only)."""
from __future__ import annotations

from dataclasses import asdict

from flask import request
from flask.views import MethodView
from flask_smorest import Blueprint

from app import limits
from app.api.campaigns import service as campaign_service
from app.api.common import require_admin
from app.api.errors import ErrorSchema
from app.api.moh.schemas import MohListSchema, MohSchema
from app.api.queues import service as queue_service
from app.api.raw_uploads import MOH_UPLOAD, request_upload
from app.api.security import current_identity, require_license, tenant_db
from app.config import get_config
from app.errors import Conflict, UnsupportedMediaType, ValidationFailed
from app.media import moh_uploads

blp = Blueprint("moh", __name__, url_prefix="/api/moh", description="Hold music")

_TYPES = sorted(MOH_UPLOAD.content_types)
_UPLOAD_BODY = {
    "required": True,
    "description": (f"The audio file itself, WAV or MP3, at most {limits.MOH_UPLOAD_MAX_BYTES} bytes and "
                    f"{limits.MOH_UPLOAD_MAX_SECONDS} s; stored as 8 kHz mono 16-bit WAV"),
    "content": {t: {"schema": {"type": "string", "format": "binary"}} for t in _TYPES},
}


@blp.route("")
class MohList(MethodView):
    @require_license("queue-mgmt")
    @require_admin
    @blp.response(200, MohListSchema)
    def get(self):
        """The account's uploaded hold music, by name."""
        with moh_uploads.storage_errors():
            items = moh_uploads.list_music(get_config().moh_dir, current_identity().account_id)
        return {"items": [asdict(m) for m in items]}


@blp.route("/<string:name>")
class MohByName(MethodView):
    @require_license("queue-mgmt")
    @require_admin
    @blp.doc(requestBody=_UPLOAD_BODY)
    @blp.response(200, MohSchema, description="Replaced a file of that name")
    @blp.alt_response(201, schema=MohSchema, description="Stored a new file")
    @blp.alt_response(409, schema=ErrorSchema, description="moh_limit_reached: "
                      f"at most {limits.MOH_MAX_FILES_PER_ACCOUNT} files per account")
    @blp.alt_response(413, schema=ErrorSchema, description="payload_too_large")
    @blp.alt_response(503, schema=ErrorSchema, description="moh_storage_unavailable: moh.dir cannot be written")
    @blp.alt_response(415, schema=ErrorSchema, description="unsupported_media_type: not " + ", ".join(_TYPES))
    @blp.alt_response(422, schema=ErrorSchema, description=(
        "invalid_audio (does not decode as WAV or MP3, or shorter than "
        f"{limits.MOH_UPLOAD_MIN_SECONDS} s), audio_too_long, invalid_moh_name"))
    def put(self, name: str):
        """Upload (or replace) hold music called ``name``: a queue whose ``moh`` is ``name``
        plays it."""
        if request_upload(request) is None:
            sent = request.mimetype or "none"
            raise UnsupportedMediaType(f"Send the audio with 'Content-Type: {' or '.join(_TYPES)}' "
                                       f"(got: {sent}).", details={"content_type": sent[:100]})
        body = request.get_data(cache=False)
        if not body:
            raise ValidationFailed("The body is empty: send the audio file.", code="invalid_audio",
                                   details={"reason": "empty"})
        with moh_uploads.storage_errors():
            stored, created = moh_uploads.store(get_config().moh_dir, current_identity().account_id, name, body)
        return asdict(stored), 201 if created else 200

    @require_license("queue-mgmt")
    @require_admin
    @blp.response(204)
    @blp.alt_response(404, schema=ErrorSchema, description="moh_not_found")
    @blp.alt_response(409, schema=ErrorSchema, description="moh_in_use: a queue's moh or a campaign's "
                      "amd_message names it")
    def delete(self, name: str):
        """Delete the hold music called ``name``; refused while a queue plays it (its callers
        would wait in silence: a queue's moh must name music that exists) or a campaign leaves
        it on answering machines (``amd_message`` ``{"audio": name}``)."""
        account_id = current_identity().account_id
        with tenant_db() as db:
            queues = queue_service.names_playing(db, account_id, name)
            campaigns = campaign_service.names_leaving(db, account_id, name)
        if queues or campaigns:
            raise Conflict("Queues play this audio or campaigns leave it on answering machines; give them "
                           "another first.", code="moh_in_use", details={"queues": queues, "campaigns": campaigns})
        with moh_uploads.storage_errors():
            moh_uploads.delete(get_config().moh_dir, account_id, name)
        return None
