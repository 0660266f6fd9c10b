"""/api/recordings/:id, /api/recordings/:id/audio, and per call record /recordings and
/transcript. All need recordings.view.

The audio is streamed from the shared recording directory with HTTP Range support (werkzeug's
conditional responses: ``206 Partial Content``, ``Accept-Ranges: bytes``), so a browser player
can seek in a long call without downloading it whole. A Range werkzeug would refuse although
RFC 9110 says to serve the whole file (another unit, a suffix longer than the file, several
ranges) gets 200 and the whole file (``ranges.py``)."""
from __future__ import annotations

import os
import uuid

from flask import request, send_file
from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.recordings import service
from app.api.recordings.ranges import ignore_range
from app.api.recordings.schemas import RecordingListSchema, RecordingSchema, TranscriptSchema
from app.api.security import current_identity, require_permission, tenant_db
from app.config import get_config

blp = Blueprint("recordings", __name__, url_prefix="/api/recordings", description="Recordings")
call_media_blp = Blueprint("call_record_media", __name__, url_prefix="/api/call-records",
                           description="A call record's recordings and transcript")

MIMETYPES = {"mp3": "audio/mpeg", "wav": "audio/wav"}


@blp.route("/<uuid:recording_id>")
class RecordingById(MethodView):
    @require_permission("recordings.view")
    @blp.response(200, RecordingSchema)
    def get(self, recording_id: uuid.UUID):
        """A recording's metadata and status."""
        with tenant_db() as db:
            return service.recording(db, current_identity().account_id, recording_id)


@blp.route("/<uuid:recording_id>/audio")
class RecordingAudio(MethodView):
    @require_permission("recordings.view")
    @blp.response(200, content_type="audio/mpeg", description="The audio file; honours Range (206)")
    def get(self, recording_id: uuid.UUID):
        """Stream the audio (audio/mpeg or audio/wav)."""
        with tenant_db() as db:
            path, fmt = service.audio_path(db, current_identity().account_id, recording_id,
                                           get_config().recording_dir)
        if ignore_range(request.headers.get("Range"), os.path.getsize(path)):
            request.environ.pop("HTTP_RANGE", None)  # the whole file, 200 (RFC 9110: ranges.py)
        response = send_file(path, mimetype=MIMETYPES[fmt], conditional=True, etag=True,
                             download_name=f"{recording_id}.{fmt}")
        response.headers["Cache-Control"] = "private, no-store"
        return response


@call_media_blp.route("/<uuid:public_id>/recordings")
class CallRecordRecordings(MethodView):
    @require_permission("recordings.view")
    @call_media_blp.response(200, RecordingListSchema)
    def get(self, public_id: uuid.UUID):
        """The call's recordings, oldest first."""
        with tenant_db() as db:
            return service.recordings_of_call(db, current_identity().account_id, public_id)


@call_media_blp.route("/<uuid:public_id>/transcript")
class CallRecordTranscript(MethodView):
    @require_permission("recordings.view")
    @call_media_blp.response(200, TranscriptSchema)
    def get(self, public_id: uuid.UUID):
        """The time-ordered transcript with speakers and sentiment."""
        with tenant_db() as db:
            return service.transcript_of_call(db, current_identity().account_id, public_id)
