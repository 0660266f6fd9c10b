"""/api/recordings/:id, /api/recordings/:id/audio, /api/recordings/:id/peaks (the console's
waveform), and per call record /recordings and /transcript. All need recordings.view.

The audio is streamed from the shared recording directory with HTTP Range support (werkzeug's
conditional responses: ``206 Partial Content``, ``Accept-Ranges: bytes``), so a browser player
can seek in a long call without downloading it whole. A Range werkzeug would refuse although
RFC 9110 says to serve the whole file (another unit, a suffix longer than the file, several
ranges) gets 200 and the whole file (``ranges.py``).

``/audio`` takes the token, which a browser's ``<audio src>`` cannot send; the console asks for
a media ticket (``POST …/tickets``, ``media_tickets.py``) and plays ``…/stream?ticket=``: the
same file with the same Range handling, authenticated by the ticket alone."""
from __future__ import annotations

import os
import re
import uuid
from typing import Any

import redis
from flask import Response, current_app, request, send_file
from flask.views import MethodView
from flask_smorest import Blueprint

from app import limits
from app.accounts.login_throttle import throttle_client
from app.api.recordings import media_tickets, service
from app.api.recordings.ranges import ignore_range
from app.api.recordings.schemas import (
    MediaStreamQuerySchema,
    MediaTicketSchema,
    PeaksSchema,
    RecordingListSchema,
    RecordingSchema,
    TranscriptSchema,
)
from app.api.security import current_identity, require_permission, tenant_db
from app.api.tenancy import request_tenant
from app.config import get_config
from app.db.engine import tenant_session
from app.settings import get_settings

blp = Blueprint("recordings", __name__, url_prefix="/api/recordings", description="Recordings")
call_media_blp = Blueprint("call_record_media", __name__, url_prefix="/api/call-records",
                           description="A call record's recordings and transcript")

MIMETYPES = {"mp3": "audio/mpeg", "wav": "audio/wav"}
REDIS_EXTENSION = "sbc_media_tickets_redis"
_STREAM_PATH = re.compile(r"\A/api/recordings/[0-9a-fA-F-]{36}/stream\Z")


def is_media_stream_path(path: str) -> bool:
    """The stream authenticates with its media ticket, not a header: the REST hook skips it."""
    return _STREAM_PATH.match(path) is not None


def _redis() -> redis.Redis:
    client = current_app.extensions.get(REDIS_EXTENSION)
    if client is None:
        client = current_app.extensions[REDIS_EXTENSION] = throttle_client(get_settings().redis_url)
    return client


def _send_audio(path: str, fmt: str, recording_id: uuid.UUID) -> Response:
    if ignore_range(request.headers.get("Range"), os.path.getsize(path)):
        request.environ.pop("HTTP_RANGE", None)  # the whole file, 200 (RFC 9110: ranges.py)
    response = send_file(path, mimetype=MIMETYPES[fmt], conditional=True, etag=True,
                         download_name=f"{recording_id}.{fmt}")
    response.headers["Cache-Control"] = "private, no-store"
    return response


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
        return _send_audio(path, fmt, recording_id)


@blp.route("/<uuid:recording_id>/peaks")
class RecordingPeaks(MethodView):
    @require_permission("recordings.view")
    @blp.response(200, PeaksSchema)
    def get(self, recording_id: uuid.UUID) -> dict[str, Any]:
        """The recording's waveform: 200 peaks (0.0 silence .. 1.0 full scale), the console's.

        Read from the file once, then cached. 404 ``recording_not_found`` for another tenant's,
        ``recording_audio_not_found`` when the file is gone; 422 ``recording_audio_unreadable``."""
        with tenant_db() as db:
            return service.peaks(db, current_identity().account_id, recording_id, get_config().recording_dir,
                                 _redis(), get_settings().redis_key_prefix)


@blp.route("/<uuid:recording_id>/tickets")
class RecordingTickets(MethodView):
    @require_permission("recordings.view")
    @blp.response(201, MediaTicketSchema)
    def post(self, recording_id: uuid.UUID) -> dict[str, Any]:
        """A media ticket: this recording's audio for a player that cannot send the token.

        Good for several Range requests (one playback seeks) until it expires, for this
        recording on this tenant's host only."""
        me = current_identity()
        with tenant_db() as db:
            service.get_recording(db, me.account_id, recording_id)  # 404 for another tenant's
        ticket = media_tickets.issue(_redis(), get_settings().redis_key_prefix, account_id=me.account_id,
                                     recording_id=recording_id, subdomain=me.subdomain)
        return {"ticket": ticket, "expires_in_seconds": limits.RECORDING_MEDIA_TICKET_TTL_SECONDS,
                "stream_url": f"/api/recordings/{recording_id}/stream?ticket={ticket}"}


@blp.route("/<uuid:recording_id>/stream")
class RecordingStream(MethodView):
    @blp.doc(security=[], responses={"200": {
        "description": "The audio file; honours Range (206). 401 `invalid_ticket` without a live ticket",
        "content": {"audio/mpeg": {"schema": {"type": "string", "format": "binary"}}}}})
    @blp.arguments(MediaStreamQuerySchema, location="query")
    def get(self, query: dict[str, Any], recording_id: uuid.UUID) -> Response:
        """The audio, authenticated by a media ticket (no token), with HTTP Range.

        401 ``invalid_ticket`` for a ticket that is unknown, expired, for another recording or
        another tenant's."""
        held = media_tickets.redeem(_redis(), get_settings().redis_key_prefix, query["ticket"],
                                    recording_id=recording_id, subdomain=request_tenant())
        with tenant_session(held.account_id) as db:
            path, fmt = service.audio_path(db, held.account_id, recording_id, get_config().recording_dir)
        return _send_audio(path, fmt, recording_id)


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
