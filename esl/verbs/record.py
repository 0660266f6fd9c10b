"""record → ``set RECORD_STEREO=<stereo>`` + ``record_session <dir>/<file>.<format>``, then the
call is held (``park``) while it records, until the caller hangs up.

record ends the list (SPEC "Verbs"), so nothing would keep the call up after record_session
(which returns at once, capture outbound_record_session); parking keeps the channel and the
recording alive. When FreeSWITCH reports RECORD_STOP for this file (at hangup),
``media.recording.completed`` is published with the file, its length and the statusHook; the
media pipeline notifies the statusHook when the recording is ready.
"""
from __future__ import annotations

import posixpath
import uuid
from typing import TYPE_CHECKING

from marshmallow import validate

from esl.verbs.base import Verb, VerbOutcome, VerbSchema
from esl.verbs.context import VerbContext
from esl.verbs.fields import HookUrl, StrictBoolean, Text

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event


def recording_path(ctx: VerbContext, fmt: str) -> str:
    """``<recordings_dir>/<account>_<call>_<n>.<fmt>``: flat, so FreeSWITCH needs no mkdir, and
    unique per recording. Ids are uuids: no path characters can come from the customer."""
    name = f"{ctx.account_id}_{ctx.call_id}_{uuid.uuid4().hex[:8]}.{fmt}"
    return posixpath.join(ctx.recordings_dir, name)


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

        def on_stop(event: "Event") -> None:
            if event.get("Record-File-Path") != path:
                return
            ctx.publish("media.recording.completed", {
                "callId": ctx.call_id, "traceId": ctx.trace_id, "accountSid": ctx.account_id,
                "path": path, "format": p["format"], "stereo": p["stereo"],
                "seconds": event.variable("record_seconds"),
                "completionCause": event.get("Record-Completion-Cause"),
                "statusHook": p.get("statusHook"),
            })

        ctx.on_event("RECORD_STOP", on_stop)
        ctx.set_var("RECORD_STEREO", "true" if p["stereo"] else "false")
        ctx.set_var("media_bug_answer_req", "true")  # record from answer, not from early media
        ctx.execute("record_session", path)
        ctx.record_feature("has_recording")
        ctx.execute("park")
        return VerbOutcome.end("recorded", path=path)
