"""The call status hook (``call_status_hook_url``): POSTed call-status updates.

SPEC leaves the body open; ours mirrors the answering webhook (docs/webhooks-status.md):
``callId, traceId, accountSid, applicationSid, from, to, direction`` plus ``callStatus`` and,
when the call has ended, the outcome (duration, hangup cause, SIP status, timestamps, tags).

``callStatus`` values: ``ringing`` (call arrived), ``in-progress`` (answered), then one final
value: ``completed``, ``busy``, ``no-answer``, ``canceled``, ``failed`` or ``refused`` — the same
words as ``call_records.status``.

Delivery goes through the webhook client (signed, SSRF-guarded, 3 attempts) in its own
greenlet: a slow or dead customer server never delays the call or the hangup path.
"""
from __future__ import annotations

import logging
import math
import re
from typing import Any, Mapping

import gevent

from app.events.envelope import rfc3339

log = logging.getLogger(__name__)

INTERIM_STATUSES = ("ringing", "in-progress")
FINAL_STATUSES = ("completed", "busy", "no-answer", "canceled", "failed", "refused")

def _digits(value: str | None) -> str:
    return re.sub(r"\D", "", value or "")


def base_body(ctx, call_id: str, call_status: str, *, from_number: str | None = None,
              to_number: str | None = None, direction: str | None = None) -> dict[str, Any]:
    """Fields every status update carries (``ctx`` is an ``app.calls.records.CallContext``)."""
    if call_status not in INTERIM_STATUSES + FINAL_STATUSES:
        raise ValueError(f"unknown callStatus {call_status!r}")
    return {
        "callId": str(call_id),
        "traceId": str(ctx.trace_id),
        "accountSid": str(ctx.account_id),
        "applicationSid": str(ctx.application_id) if ctx.application_id else None,
        "from": _digits(from_number if from_number is not None else ctx.from_number),
        "to": _digits(to_number if to_number is not None else ctx.to_number),
        "direction": direction or ctx.direction or "inbound",
        "callStatus": call_status,
    }


def final_body(written, ctx) -> dict[str, Any]:
    """The last update of a leg, from what ``write_call_record`` returned."""
    facts = written.facts
    body = base_body(ctx, facts.call_id, written.status,
                     from_number=ctx.from_number if ctx.from_number is not None else facts.caller,
                     to_number=ctx.to_number if ctx.to_number is not None else facts.callee,
                     direction=ctx.direction or facts.direction)
    body.update({
        "callRecordSid": str(written.public_id),
        # whole seconds, rounded up like the minutes meter: a 1.06 s call lasted 2 s
        "duration": math.ceil(facts.duration_ms / 1000),
        "talkDuration": math.ceil(facts.talk_ms / 1000),
        "hangupCause": facts.hangup_cause,
        "sipStatus": facts.sip_status,
        "hangupReason": ctx.hangup_reason,
        "startTime": rfc3339(facts.started_at),
        "answerTime": rfc3339(facts.answered_at) if facts.answered_at else None,
        "endTime": rfc3339(facts.ended_at),
        "tags": dict(ctx.tags),
    })
    return body


def send_status(url: str | None, body: Mapping[str, Any], *, secret: str | None = None,
                basic_auth: tuple[str, str] | None = None, client=None,
                after: gevent.Greenlet | None = None) -> gevent.Greenlet | None:
    """Fire and forget: returns the greenlet (join it in tests), or None when the application
    has no status hook. Never raises into the call. ``after``: the call's previous update,
    delivered (or given up) first, so a retried ``in-progress`` never lands after the final."""
    if not url:
        return None
    if client is None:
        from app.webhooks.client import get_client  # the process's shared keep-alive pools

        client = get_client()

    def run() -> bool:
        if after is not None:
            after.join()
        try:
            client.post_status(url, body, secret=secret, basic_auth=basic_auth)
            return True
        except Exception as exc:  # WebhookFailed, or a bug: the call must go on either way
            log.warning("call status hook failed (%s): %s", body.get("callStatus"), exc)
            return False

    return gevent.spawn(run)
