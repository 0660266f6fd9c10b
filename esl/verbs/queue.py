"""queue → the caller waits on music on hold with position announcements.

Each round: ``speak flite|<voice>|You are caller number N`` (when announcePosition), then
``set playback_timeout_sec=<announceInterval>`` + ``playback local_stream://<moh>`` so the hold
music returns after the interval. When ``timeout`` has been waited: POST ``timeoutHook`` and
run its reply, or end the list. Position comes from a Redis list per queue.

Agents are not offered these callers yet (the contact-centre issue adds distribution): the
caller leaves the queue on timeout or hangup. Events: queue.caller.enqueued, then
queue.caller.dequeued (timeout) or queue.caller.abandoned (hangup).
"""
from __future__ import annotations

import math
import time

from marshmallow import validate

from app import limits
from app.ops.metrics import QUEUE_WAITERS
from app.settings import get_settings
from esl.verbs import tts
from esl.verbs.base import Verb, VerbOutcome, VerbSchema
from esl.verbs.context import VerbContext
from esl.verbs.fields import HookUrl, StrictBoolean, StrictInteger, Text
from esl.verbs.queue_positions import QueuePositions

QUEUE_NAME_PATTERN = r"^[A-Za-z0-9 _.\-]{1,64}$"
MOH_PATTERN = r"^[A-Za-z0-9_.\-/]{1,64}$"
# A playback that returns this much earlier than asked means the stream is missing: wait the
# rest with ``sleep`` instead of spinning.
_EARLY_RETURN_SLACK_SECONDS = 0.5


class QueueSchema(VerbSchema):
    name = Text(required=True, pattern=QUEUE_NAME_PATTERN,
                pattern_message="1-64 letters, digits, spaces, '_', '.', '-'.")
    moh = Text(load_default="default", pattern=MOH_PATTERN,
               pattern_message="A local_stream name: letters, digits, '_', '.', '-', '/'.")
    timeout = StrictInteger(load_default=limits.QUEUE_DEFAULT_MAX_WAIT_SECONDS,
                            validate=validate.Range(min=1, max=limits.QUEUE_MAX_WAIT_SECONDS))
    timeoutHook = HookUrl()
    announcePosition = StrictBoolean(load_default=True)
    announceInterval = StrictInteger(load_default=limits.QUEUE_DEFAULT_ANNOUNCE_INTERVAL_SECONDS,
                                     validate=validate.Range(
                                         min=limits.QUEUE_MIN_ANNOUNCE_INTERVAL_SECONDS,
                                         max=limits.QUEUE_MAX_WAIT_SECONDS))


def position_text(position: int) -> str:
    return f"You are caller number {position}"


class Queue(Verb):
    name = "queue"
    schema_class = QueueSchema
    ends_list = True

    def _event(self, ctx: VerbContext, **extra: object) -> dict:
        return {"callId": ctx.call_id, "traceId": ctx.trace_id, "accountSid": ctx.account_id,
                "queue": self.params["name"], **extra}

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        p = self.params
        positions = QueuePositions(ctx.redis, get_settings().redis_key_prefix, ctx.account_id, p["name"])
        positions.join(ctx.call_id)
        QUEUE_WAITERS.join(ctx.call_id)
        ctx.publish("queue.caller.enqueued", self._event(ctx, position=positions.position(ctx.call_id)))
        voice = tts.resolve_voice(ctx, None)
        waited = 0
        finished = False
        try:
            while waited < p["timeout"]:
                if p["announcePosition"]:
                    position = positions.position(ctx.call_id)
                    if position is not None:
                        ctx.execute("speak", tts.speak_arg(voice, position_text(position)))
                    chunk = min(p["announceInterval"], p["timeout"] - waited)
                else:
                    chunk = p["timeout"] - waited
                self._hold(ctx, chunk)
                waited += chunk
            finished = True
        finally:
            positions.leave(ctx.call_id)
            QUEUE_WAITERS.leave(ctx.call_id)
            key = "queue.caller.dequeued" if finished else "queue.caller.abandoned"
            ctx.publish(key, self._event(ctx, waitedSeconds=waited, reason="timeout" if finished else "hangup"))
        hook = p.get("timeoutHook")
        if hook:
            return VerbOutcome.replace(ctx.fetch_instructions(hook, {"queue": p["name"], "queueResult": "timeout"}))
        return VerbOutcome.end("queue_timeout")

    def _hold(self, ctx: VerbContext, seconds: int) -> None:
        ctx.set_var("playback_timeout_sec", str(max(1, math.ceil(seconds))))
        started = time.monotonic()
        ctx.execute("playback", f"local_stream://{self.params['moh']}")
        elapsed = time.monotonic() - started
        if elapsed < seconds - _EARLY_RETURN_SLACK_SECONDS:
            ctx.execute("sleep", str(math.ceil(seconds - elapsed) * 1000))
