"""queue → the caller waits on music on hold with position announcements.

Each round: ``speak flite|<voice>|You are caller number N`` (when announcePosition), then
``set playback_timeout_sec=<whole seconds>`` + ``playback local_stream://<moh>`` so the hold
music returns after the interval, and a ``sleep`` for what is left to the millisecond. The
maximum wait is one deadline from the moment the caller joins: announcements count (they
take ~1.6 s each with flite; not counting them made a 12 s wait last 16.8 s on the real
switch), no announcement starts within ANNOUNCEMENT_ALLOWANCE_SECONDS of the deadline, and
each hold is cut to what remains. When the deadline is reached: POST ``timeoutHook`` and run
its reply, or end the list. Position comes from a Redis list per queue.

Agents are not offered these callers yet (the contact-centre issue adds distribution): the
caller leaves the queue on timeout or hangup. Events: queue.caller.enqueued, then
queue.caller.dequeued (timeout) or queue.caller.abandoned (hangup).
"""
from __future__ import annotations

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
# No position announcement starts closer than this to the maximum wait: flite says "You are
# caller number N" in ~1.6 s (measured on FreeSWITCH 1.10.12), so one started earlier ends in time.
ANNOUNCEMENT_ALLOWANCE_SECONDS = 3.0
# switch_ivr_play_file honours playback_timeout_sec only above 1.
PLAYBACK_TIMEOUT_MIN_SECONDS = 2
# Less than this left: the wait is over (not worth another playback/sleep round trip).
_DEADLINE_SLACK_SECONDS = 0.05


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
        timeout_set = False
        joined = time.monotonic()
        deadline = joined + p["timeout"]
        finished = False
        try:
            while (remaining := deadline - time.monotonic()) > _DEADLINE_SLACK_SECONDS:
                if p["announcePosition"] and remaining > ANNOUNCEMENT_ALLOWANCE_SECONDS:
                    position = positions.position(ctx.call_id)
                    if position is not None:
                        ctx.execute("speak", tts.speak_arg(voice, position_text(position)))
                    remaining = deadline - time.monotonic()
                if remaining <= _DEADLINE_SLACK_SECONDS:
                    break
                chunk = min(p["announceInterval"], remaining) if p["announcePosition"] else remaining
                timeout_set = self._hold(ctx, chunk) or timeout_set
            finished = True
        finally:
            waited = round(time.monotonic() - joined)
            positions.leave(ctx.call_id)
            QUEUE_WAITERS.leave(ctx.call_id)
            key = "queue.caller.dequeued" if finished else "queue.caller.abandoned"
            ctx.publish(key, self._event(ctx, waitedSeconds=waited, reason="timeout" if finished else "hangup"))
        if timeout_set:  # left set, it would cut every later playback of this call short
            ctx.set_var("playback_timeout_sec", "")
        hook = p.get("timeoutHook")
        if hook:
            return VerbOutcome.replace(ctx.fetch_instructions(hook, {"queue": p["name"], "queueResult": "timeout"}))
        return VerbOutcome.end("queue_timeout")

    def _hold(self, ctx: VerbContext, seconds: float) -> bool:
        """Hold music for ``seconds``. ``playback_timeout_sec`` takes whole seconds and
        FreeSWITCH ignores values below 2 (switch_ivr_play_file: ``tmp > 1``: with 1 the
        endless stream never returns), so the music plays the whole seconds from 2 up and a
        ``sleep`` (milliseconds) covers the rest — as it does when the stream ends early (a
        missing stream returns at once). Returns whether it set ``playback_timeout_sec``."""
        started = time.monotonic()
        music = seconds >= PLAYBACK_TIMEOUT_MIN_SECONDS
        if music:
            ctx.set_var("playback_timeout_sec", str(int(seconds)))
            ctx.execute("playback", f"local_stream://{self.params['moh']}")
        rest = seconds - (time.monotonic() - started)
        if rest > _DEADLINE_SLACK_SECONDS:
            ctx.execute("sleep", str(int(rest * 1000)))
        return music
