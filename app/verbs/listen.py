"""listen → ``api uuid_audio_fork <uuid> start <ws(s) url> <mono|mixed|stereo> <8k|16k> <metadata>``
(mod_audio_fork), then the call is held (app/verbs/hold.py) while audio streams, until hangup.

The metadata JSON is one argument: compact JSON, single-quoted when it contains a space.

``+OK`` only means the fork was attached: mod_audio_fork connects afterwards and reports the
outcome as CUSTOM events (not in ``myevents``; subscribed before the fork starts so none is
missed). ``mod_audio_fork::connect_failed`` (refused, TLS certificate not trusted, ...; its body
is ``{"reason": "..."}``) ends the call: the reason goes on the call record
(``hangupReason: listen_failed: <reason>``) and ``interaction.listen.failed`` is published, as
for a ``-ERR`` reply. A ``wss://`` server with a private CA is trusted through FreeSWITCH's
``SSL_CERT_FILE`` (docs/verbs.md).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from marshmallow import validate

from app import limits
from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import WS_URL_PATTERN, JsonObject, StrictInteger, Text
from app.verbs.fsargs import plain_text, quote_arg
from app.verbs.hold import hold
from app.verbs.media_guard import WS, check_media_url

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event

_RATE_ARG = {8000: "8k", 16000: "16k"}
CONNECT_FAILED = "mod_audio_fork::connect_failed"
FAILED_KEY = "interaction.listen.failed"
REASON_MAX_CHARS = 200


class ListenSchema(VerbSchema):
    url = Text(required=True, pattern=WS_URL_PATTERN, pattern_message="Must be a ws:// or wss:// URL.",
               max_length=limits.VERB_URL_MAX_LENGTH)
    mixType = Text(load_default="mixed", validate=validate.OneOf(("mono", "stereo", "mixed")))
    sampleRate = StrictInteger(load_default=limits.LISTEN_DEFAULT_SAMPLE_RATE,
                               validate=validate.OneOf(limits.LISTEN_SAMPLE_RATES))
    metadata = JsonObject()


def failure_reason(event: "Event") -> str:
    """The ``reason`` of a connect_failed body (``{"reason":"conn fail: 111"}``), else the body."""
    body = (event.body or "").strip()
    try:
        reason = json.loads(body).get("reason", body)
    except (ValueError, AttributeError):
        reason = body
    return plain_text(str(reason))[:REASON_MAX_CHARS] or "connect_failed"


class Listen(Verb):
    name = "listen"
    schema_class = ListenSchema
    ends_list = True

    def api_command(self, ctx: VerbContext) -> str:
        p = self.params
        meta = plain_text(json.dumps(p.get("metadata") or {}, separators=(",", ":")))
        return (f"uuid_audio_fork {ctx.call_id} start {p['url']} {p['mixType']} "
                f"{_RATE_ARG[p['sampleRate']]} {quote_arg(meta)}")

    def _failed(self, ctx: VerbContext, reason: str) -> None:
        ctx.publish(FAILED_KEY, {"callId": ctx.call_id, "traceId": ctx.trace_id,
                                 "accountSid": ctx.account_id, "url": self.params["url"],
                                 "reply": reason})

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        check_media_url(self.name, self.params["url"], kind=WS)

        def on_connect_failed(event: "Event") -> None:
            reason = failure_reason(event)
            self._failed(ctx, reason)
            ctx.hangup("NORMAL_CLEARING", reason=f"listen_failed: {reason}")

        ctx.on_event(CONNECT_FAILED, on_connect_failed)
        reply = ctx.api(self.api_command(ctx)).strip()
        if not reply.startswith("+OK"):
            self._failed(ctx, reply[:REASON_MAX_CHARS])
            return VerbOutcome.end("listen_failed", reply=reply)
        hold(ctx)
        return VerbOutcome.end("listened")
