"""listen → ``api uuid_audio_fork <uuid> start <wss url> <mono|mixed|stereo> <8k|16k> <metadata>``
(mod_audio_fork), then the call is held (``park``) while audio streams, until hangup.

The metadata JSON is one argument: compact JSON, single-quoted when it contains a space.
"""
from __future__ import annotations

import json

from marshmallow import validate

from app import limits
from esl.verbs.base import Verb, VerbOutcome, VerbSchema
from esl.verbs.context import VerbContext
from esl.verbs.fields import JsonObject, StrictInteger, Text, WSS_URL_PATTERN
from esl.verbs.fsargs import plain_text, quote_arg

_RATE_ARG = {8000: "8k", 16000: "16k"}


class ListenSchema(VerbSchema):
    url = Text(required=True, pattern=WSS_URL_PATTERN, pattern_message="Must be a wss:// URL.",
               max_length=limits.VERB_URL_MAX_LENGTH)
    mixType = Text(load_default="mixed", validate=validate.OneOf(("mono", "stereo", "mixed")))
    sampleRate = StrictInteger(load_default=limits.LISTEN_DEFAULT_SAMPLE_RATE,
                               validate=validate.OneOf(limits.LISTEN_SAMPLE_RATES))
    metadata = JsonObject()


class Listen(Verb):
    name = "listen"
    schema_class = ListenSchema
    ends_list = True

    def api_command(self, ctx: VerbContext) -> str:
        p = self.params
        meta = plain_text(json.dumps(p.get("metadata") or {}, separators=(",", ":")))
        return (f"uuid_audio_fork {ctx.call_id} start {p['url']} {p['mixType']} "
                f"{_RATE_ARG[p['sampleRate']]} {quote_arg(meta)}")

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        reply = ctx.api(self.api_command(ctx)).strip()
        if not reply.startswith("+OK"):
            ctx.publish("interaction.listen.failed", {
                "callId": ctx.call_id, "traceId": ctx.trace_id, "accountSid": ctx.account_id,
                "reply": reply[:200]})
            return VerbOutcome.end("listen_failed", reply=reply)
        ctx.execute("park")
        return VerbOutcome.end("listened")
