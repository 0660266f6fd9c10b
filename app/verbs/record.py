"""record → ``set RECORD_STEREO=<stereo>`` + ``record_session <dir>/<file>.<format>``, then the
call is held (app/verbs/hold.py) while it records, until the caller hangs up.

record ends the list (SPEC "Verbs") and record_session returns at once (capture
outbound_record_session), so the verb holds the call: with an endless silence playback, not
``park`` (refused under socket control). The caller is answered before record_session, which
would otherwise pre-answer the channel itself. When FreeSWITCH reports RECORD_STOP for this
file (at hangup), ``media.recording.completed`` is published (app/verbs/recording.py); the media
pipeline notifies the statusHook when the recording is ready.
"""
from __future__ import annotations

from marshmallow import validate

from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import HookUrl, StrictBoolean, Text
from app.verbs.hold import hold
from app.verbs.recording import prepare_recording, recording_path, report_when_stopped


class RecordSchema(VerbSchema):
    format = Text(load_default="mp3", validate=validate.OneOf(("mp3", "wav")))
    stereo = StrictBoolean(load_default=True)
    statusHook = HookUrl()


class Record(Verb):
    name = "record"
    schema_class = RecordSchema
    ends_list = True

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        p = self.params
        path = recording_path(ctx, p["format"])
        report_when_stopped(ctx, path, fmt=p["format"], stereo=p["stereo"],
                            status_hook=p.get("statusHook"))
        prepare_recording(ctx, stereo=p["stereo"])
        ctx.execute("record_session", path)
        hold(ctx)
        return VerbOutcome.end("recorded", path=path)
