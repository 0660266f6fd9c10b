"""One way for every recording verb (record, dial record:true, conference record:true) to name
its file and to report it: ``media.recording.completed`` from the channel's RECORD_STOP.

RECORD_STOP for a record_session file comes at hang-up, after the socket application's
EXECUTE_COMPLETE and before CHANNEL_HANGUP_COMPLETE (capture outbound_record_session); it
carries ``variable_record_seconds`` / ``variable_record_ms`` and ``Record-Completion-Cause``.
The media pipeline (workers) consumes the event; one payload shape for all three verbs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from app.events.payloads import recording_completed
from app.media.storage import recording_file_path
from app.verbs.context import VerbContext

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event

COMPLETED_KEY = "media.recording.completed"

# record_session holds back its first frames (FreeSWITCH's RECORD_PRE_BUFFER_FRAMES, default 25)
# in the media bug before writing any. When the channel's packet size changes (a caller sending
# 30 or 40 ms without a=ptime: "Asynchronous PTIME not supported"), the next write of another
# size engages the session's write buffer, which flushes every media bug
# (switch_core_media.c "Engaging Write Buffer" → switch_core_media_bug_flush_all): the held-back
# 0.3-0.4 s at the start of the call were lost (issue 27, docs/media.md "Recording length").
# "0" turns the pre-buffer off (switch_ivr_async.c sets it only for a value > 0), so each frame
# is written as it is read and a flush costs at most the frame in flight.
PRE_BUFFER_VAR, NO_PRE_BUFFER = "RECORD_PRE_BUFFER_FRAMES", "0"


def prepare_recording(ctx: VerbContext, *, stereo: bool) -> None:
    """The channel variables record_session reads when it starts: channels (RECORD_STEREO: the
    caller left, the other side right) and no pre-buffer (above)."""
    ctx.set_var("RECORD_STEREO", "true" if stereo else "false")
    ctx.set_var(PRE_BUFFER_VAR, NO_PRE_BUFFER)


def recording_path(ctx: VerbContext, fmt: str) -> str:
    """``<recordings_dir>/<account>_<call>_<n>.<fmt>`` (``app.media.storage``: the API serves a
    file to its account only by this name)."""
    return recording_file_path(ctx.recordings_dir, ctx.account_id, ctx.call_id, fmt)


def recorded_seconds(event: "Event") -> Optional[float]:
    """Length of the file: ``record_ms`` (millisecond precision) else ``record_seconds``."""
    ms = event.variable("record_ms")
    if ms and ms.isdigit():
        return int(ms) / 1000.0
    secs = event.variable("record_seconds")
    return float(secs) if secs and secs.isdigit() else None


def completed_payload(ctx: VerbContext, event: "Event", *, path: str, fmt: str, stereo: bool,
                      status_hook: Optional[str]) -> dict[str, Any]:
    return recording_completed(ctx.call_id, trace_id=ctx.trace_id, account_id=ctx.account_id,
                               path=path, fmt=fmt, stereo=stereo, seconds=recorded_seconds(event),
                               completion_cause=event.get("Record-Completion-Cause"),
                               status_hook=status_hook)


def report_when_stopped(ctx: VerbContext, path: str, *, fmt: str, stereo: bool,
                        status_hook: Optional[str] = None) -> None:
    """Mark the call record ``has_recording`` when FreeSWITCH starts recording ``path`` (a
    dial that never bridges records nothing) and publish ``media.recording.completed`` once
    when it stops. Call before the recording can start."""
    reported: list[bool] = []

    def on_start(event: "Event") -> None:
        if event.get("Record-File-Path") == path:
            ctx.record_feature("has_recording")

    def on_stop(event: "Event") -> None:
        if event.get("Record-File-Path") != path or reported:
            return
        reported.append(True)
        ctx.publish(COMPLETED_KEY, completed_payload(ctx, event, path=path, fmt=fmt, stereo=stereo,
                                                     status_hook=status_hook))

    ctx.on_event("RECORD_START", on_start)
    ctx.on_event("RECORD_STOP", on_stop)
