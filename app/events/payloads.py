"""Payload shapes per routing key (SPEC leaves them open; docs/events.md is the contract).

One builder per key family, so every producer emits the same fields under the same names
(camelCase, as in the webhook bodies). ``emit`` picks the exchange from the routing key.
Ids are strings, times RFC 3339 UTC, durations integer milliseconds.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from sqlalchemy.orm import Session

from app.events.envelope import rfc3339
from app.events.exchanges import exchange_for
from app.events.outbox import publish, publish_in


def _s(value: Any) -> str | None:
    return None if value is None else str(value)


def _t(value: datetime | None) -> str:
    return rfc3339(value or datetime.now(timezone.utc))


def emit(routing_key: str, payload: dict[str, Any], *, account_id: uuid.UUID | str | None = None,
         trace_id: uuid.UUID | str | None = None, session: Session | None = None,
         urgent: bool = False) -> uuid.UUID:
    """Queue an event on the exchange its key belongs to; inside ``session`` when given
    (``urgent``: wake every process's relay at commit, see ``outbox.publish_in``)."""
    exchange = exchange_for(routing_key)
    if session is not None:
        return publish_in(session, exchange, routing_key, payload, account_id=account_id, trace_id=trace_id,
                          urgent=urgent)
    return publish(exchange, routing_key, payload, account_id=account_id, trace_id=trace_id)


# call.events -----------------------------------------------------------------------------
def call_started(call_id, *, direction: str, from_number: str | None, to_number: str | None,
                 application_id=None, carrier_id=None, gateway_id=None, source_ip: str | None = None,
                 handler: str | None = None, at: datetime | None = None) -> dict[str, Any]:
    """``handler``: flow | webhook | websocket | app_json — what drives the call."""
    return {"callId": _s(call_id), "direction": direction, "from": from_number, "to": to_number,
            "applicationSid": _s(application_id), "carrierId": _s(carrier_id),
            "gatewayId": _s(gateway_id), "sourceIp": source_ip, "handler": handler, "at": _t(at)}


def call_ringing(call_id, *, target: str | None = None, at: datetime | None = None) -> dict[str, Any]:
    return {"callId": _s(call_id), "target": target, "at": _t(at)}


def call_answered(call_id, *, at: datetime | None = None) -> dict[str, Any]:
    return {"callId": _s(call_id), "at": _t(at)}


def call_amd(call_id, report: dict[str, Any], *, at: datetime | None = None) -> dict[str, Any]:
    """A campaign call's answering-machine verdict, as it is given (``report``: the detection's
    report so far, app/voice/amd.Screening.report: its ``result``, ``cause``, ``detectionMs`` and
    ``action`` are set; the beep and message fields come only on ``call.ended``)."""
    return {"callId": _s(call_id), "result": report["result"], "cause": report["cause"],
            "detectionMs": report["detectionMs"], "action": report["action"], "mode": report["mode"], "at": _t(at)}


def call_hold(call_id, *, at: datetime | None = None) -> dict[str, Any]:
    return {"callId": _s(call_id), "at": _t(at)}


def call_resumed(call_id, *, held_ms: int, at: datetime | None = None) -> dict[str, Any]:
    return {"callId": _s(call_id), "heldMs": int(held_ms), "at": _t(at)}


def call_failed(call_id, *, hangup_cause: str, sip_status: int | None = None,
                reason: str | None = None, at: datetime | None = None) -> dict[str, Any]:
    return {"callId": _s(call_id), "hangupCause": hangup_cause, "sipStatus": sip_status,
            "reason": reason, "at": _t(at)}


def call_originate(*, phone_number: str, call_id=None, caller_id: str | None = None,
                   application_id=None, agent_id=None, queue_id=None, callback_id=None,
                   attempt: int = 1, timeout_seconds: int | None = None, campaign_id=None,
                   carrier_id=None) -> dict[str, Any]:
    """→ controller: dial ``phone_number`` through least-cost routing (only ``carrier_id``'s
    gateways when given), then connect ``agent_id`` (callback dispatcher, progressive
    campaign), let the answer wait for an agent of ``queue_id`` (``campaign_id`` without an
    agent: power/predictive) or run ``application_id`` (``POST /api/calls``). A campaign's
    calls (``campaign_id``) run its answering-machine detection first."""
    payload = {"callId": _s(call_id), "phoneNumber": phone_number, "from": caller_id,
               "applicationSid": _s(application_id), "agentId": _s(agent_id), "queueId": _s(queue_id),
               "callbackId": _s(callback_id), "attempt": attempt, "timeoutSeconds": timeout_seconds}
    if campaign_id is not None or carrier_id is not None:  # older consumers' payloads unchanged
        payload.update(campaignId=_s(campaign_id), carrierId=_s(carrier_id))
    return payload


def call_supervise(*, action: str, supervision_id, call_id, supervisor_id, agent_id=None,
                   mode: str | None = None, endpoint: str | None = None,
                   timeout_seconds: int | None = None) -> dict[str, Any]:
    """→ controller (a command, like call.originate): ``action`` start | mode | stop for one
    supervisor's leg on ``call_id`` (app/calls/supervision.py, app/voice/supervisor.py)."""
    return {"action": action, "supervisionId": _s(supervision_id), "callId": _s(call_id),
            "supervisorId": _s(supervisor_id), "agentId": _s(agent_id), "mode": mode,
            "endpoint": endpoint, "timeoutSeconds": timeout_seconds}


def call_control(call_id, *, supervision_id, supervisor_id, agent_id, mode: str,
                 reason: str | None = None, duration_ms: int | None = None,
                 at: datetime | None = None) -> dict[str, Any]:
    """call.control.start (``reason``/``durationMs`` null) and call.control.stop: one
    supervisor mode segment on the call (docs/events.md)."""
    return {"callId": _s(call_id), "supervisionId": _s(supervision_id),
            "supervisorId": _s(supervisor_id), "agentId": _s(agent_id) or None, "mode": mode,
            "reason": reason, "durationMs": duration_ms, "at": _t(at)}


def call_control_applied(call_id, *, action: str, details: dict[str, Any] | None = None,
                         by: dict[str, Any] | None = None, at: datetime | None = None) -> dict[str, Any]:
    """call.control.applied: a live-control action from the REST API was done on the call
    (``POST /api/calls/:callId/actions``, or an agent's transfer); ``by``: who asked (userId,
    apiKeyId; agentId for an agent channel command)."""
    return {"callId": _s(call_id), "action": action, "details": details or {},
            "by": requester(by), "at": _t(at)}


def requester(by: Any) -> dict[str, Any]:
    """Who asked for a live-control action or a transfer, one shape for every event:
    ``userId``/``apiKeyId`` (the REST API) or ``agentId`` (the agent channel), the rest null."""
    by = by if isinstance(by, dict) else {}
    return {"userId": _s(by.get("userId")), "apiKeyId": _s(by.get("apiKeyId")),
            "agentId": _s(by.get("agentId"))}


def call_transferred(call_id, *, kind: str, from_agent: str | None, to: dict[str, Any],
                     by: dict[str, Any] | None, at: datetime | None = None) -> dict[str, Any]:
    """call.transferred: the caller left one agent for another party (docs/events.md):
    ``kind`` blind, ``from`` the agent it left, ``to`` the target, ``by`` who asked (the agent,
    or the API user / key)."""
    return {"callId": _s(call_id), "kind": kind, "from": {"agentId": _s(from_agent)}, "to": to,
            "by": requester(by), "at": _t(at)}


def call_conferenced(call_id, *, agent_id: str | None, to: dict[str, Any], by: dict[str, Any] | None,
                     at: datetime | None = None) -> dict[str, Any]:
    """call.conferenced: the agent added the party it consulted to a three-way call with the
    caller (docs/events.md)."""
    return {"callId": _s(call_id), "agentId": _s(agent_id), "to": to, "by": requester(by), "at": _t(at)}


def call_conference_left(call_id, *, agent_id: str | None, to: dict[str, Any], by: dict[str, Any] | None,
                         at: datetime | None = None) -> dict[str, Any]:
    """call.conference.left: the agent left a three-way call; the caller and ``to`` stay
    connected (docs/events.md)."""
    return {"callId": _s(call_id), "agentId": _s(agent_id), "to": to, "by": requester(by), "at": _t(at)}


def supervisor_coaching(call_id, *, supervision_id, supervisor_id, agent_id, coaching: bool,
                        at: datetime | None = None) -> dict[str, Any]:
    """agent.supervisor.coaching: the supervisor started (``coaching`` true) or stopped
    whispering to the agent."""
    return {"callId": _s(call_id), "supervisionId": _s(supervision_id),
            "supervisorId": _s(supervisor_id), "agentId": _s(agent_id) or None,
            "mode": "whisper", "coaching": coaching, "at": _t(at)}


# media.events ----------------------------------------------------------------------------
def recording_completed(call_id, *, trace_id, account_id, path: str, fmt: str, stereo: bool,
                        seconds: float | None, completion_cause: str | None,
                        status_hook: str | None) -> dict[str, Any]:
    """One shape for every recording verb (app/verbs/recording.py); app/media/jobs.py reads it."""
    return {"callId": _s(call_id), "traceId": _s(trace_id), "accountSid": _s(account_id),
            "path": path, "format": fmt, "stereo": stereo, "seconds": seconds,
            "completionCause": completion_cause, "statusHook": status_hook}


def transcription_complete(call_id, *, recording_id, transcript_url: str, engine: str,
                           audio_seconds: float, processing_ms: int, segments: int,
                           speakers: list[str], at: datetime | None = None) -> dict[str, Any]:
    return {"callId": _s(call_id), "recordingId": _s(recording_id), "transcriptUrl": transcript_url,
            "engine": engine, "audioSeconds": round(float(audio_seconds), 3),
            "processingMs": int(processing_ms), "segments": segments, "speakers": speakers,
            "at": _t(at)}


def transcription_failed(call_id, *, recording_id, reason: str, detail: str | None = None,
                         attempts: int = 1, at: datetime | None = None) -> dict[str, Any]:
    """``reason``: missing | empty | unreadable | truncated | too_long | outside_storage |
    engine_error | worker_crashed (docs/media.md)."""
    return {"callId": _s(call_id), "recordingId": _s(recording_id), "reason": reason,
            "detail": (detail or "")[:500] or None, "attempts": attempts, "at": _t(at)}


# sentiment.events ------------------------------------------------------------------------
def sentiment_score(call_id, *, recording_id, speaker: str, score: dict[str, Any],
                    at: datetime | None = None) -> dict[str, Any]:
    """One speaker's score (``score``: polarity, subjectivity, label, words)."""
    return {"callId": _s(call_id), "recordingId": _s(recording_id), "speaker": speaker, **score,
            "at": _t(at)}


def sentiment_emotion(call_id, *, recording_id, emotion: dict[str, Any],
                      at: datetime | None = None) -> dict[str, Any]:
    """``emotion``: speaker, emotion, opening, closing, delta."""
    return {"callId": _s(call_id), "recordingId": _s(recording_id), **emotion, "at": _t(at)}


def sentiment_summary(call_id, *, recording_id, call_record_id, score: dict[str, Any],
                      emotion: str, speakers: dict[str, Any], transcript_url: str,
                      at: datetime | None = None) -> dict[str, Any]:
    return {"callId": _s(call_id), "recordingId": _s(recording_id),
            "callRecordSid": _s(call_record_id), **score, "emotion": emotion,
            "speakers": speakers, "transcriptUrl": transcript_url, "at": _t(at)}


# user.events -----------------------------------------------------------------------------
def user_registration(agent_id, *, sip_user: str, domain: str, reason: str, registered: bool,
                      contact: str | None, transport: str | None, user_agent: str | None,
                      expires_at: datetime | None, changed_at: datetime | None) -> dict[str, Any]:
    """``user.registered`` / ``user.unregistered``: an agent's SIP registration began (or its
    contact or transport changed) or ended (``reason`` unregistered | expired)."""
    return {"agentId": _s(agent_id), "sipUser": sip_user, "domain": domain, "registered": registered,
            "reason": reason, "contact": contact, "transport": transport, "userAgent": user_agent,
            "expiresAt": _t(expires_at) if expires_at else None, "at": _t(changed_at)}


# system.events ---------------------------------------------------------------------------
def service_state(service: str, instance_id: str, *, host: str, pid: int, version: str,
                  started_at: datetime, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """system.service.up / .heartbeat / .down"""
    return {"service": service, "instanceId": instance_id, "host": host, "pid": pid,
            "version": version, "startedAt": _t(started_at), "details": details or {}}


def config_changed(keys: list[str]) -> dict[str, Any]:
    """system.config.changed: the runtime configuration keys set or unset (app/config.py)."""
    return {"keys": list(keys)}


def campaign_state_changed(campaign_id, *, action: str, previous: str, status: str,
                           scheduled_at: datetime | None, at: datetime | None = None) -> dict[str, Any]:
    """campaign.state_changed: one move of the campaign state machine (app/campaigns/states.py)."""
    return {"campaignId": _s(campaign_id), "action": action, "from": previous, "to": status,
            "scheduledAt": _t(scheduled_at) if scheduled_at else None, "at": _t(at)}


def campaign_attempt(campaign_id, contact_id, *, attempt: int, outcome: str, contact_status: str,
                     next_attempt_at: datetime | None, at: datetime | None = None,
                     amd: dict[str, Any] | None = None, call_id=None) -> dict[str, Any]:
    """campaign.attempt: how one dial attempt of a contact ended and what the retry rules made
    of it; ``callId`` names the attempt's call (its call record), null when none is known;
    ``amd``: the answering-machine detection's report (call.ended's ``amd``), null when none
    ran."""
    return {"campaignId": _s(campaign_id), "contactId": _s(contact_id), "callId": _s(call_id) if call_id else None,
            "attempt": attempt, "outcome": outcome, "contactStatus": contact_status,
            "nextAttemptAt": _t(next_attempt_at) if next_attempt_at else None, "at": _t(at), "amd": amd}


def routing_changed(*, what: str, ids: list[Any] | None = None) -> dict[str, Any]:
    """``what``: gateways | carriers | lcr | acl — so the controller knows what to rebuild."""
    return {"what": what, "ids": [_s(i) for i in (ids or [])]}


def gateway_state(gateway_id, *, carrier_id, address: str | None, state: str,
                  gateway: str = "", sip_status: str | None = None, phrase: str | None = None,
                  ping_ms: float | None = None, at: datetime | None = None) -> dict[str, Any]:
    """system.gateway.up / system.gateway.down (from sofia::gateway_state): ``gateway`` is the
    sofia gateway name, ``sipStatus``/``phrase`` the OPTIONS reply that changed the state."""
    return {"gatewayId": _s(gateway_id), "carrierId": _s(carrier_id), "address": address,
            "gateway": gateway, "state": state, "sipStatus": sip_status, "phrase": phrase,
            "pingMs": ping_ms, "at": _t(at)}


def gateway_registration(gateway_id, *, carrier_id, gateway: str, state: str, previous: str | None,
                         sip_status: str | None = None, phrase: str | None = None,
                         at: datetime | None = None) -> dict[str, Any]:
    """system.gateway.registration (from sofia::gateway_state ``State``): a registering
    gateway's registration moved from ``previous`` to ``state`` (REGED, FAIL_WAIT, ...)."""
    return {"gatewayId": _s(gateway_id), "carrierId": _s(carrier_id), "gateway": gateway,
            "state": state, "previous": previous, "sipStatus": sip_status, "phrase": phrase,
            "at": _t(at)}


def interaction_step(call_id, *, step: str, details: dict[str, Any] | None = None,
                     at: datetime | None = None) -> dict[str, Any]:
    """interaction.<step>: one entry of the call-journey timeline (trace_id on the envelope)."""
    return {"callId": _s(call_id), "step": step, "details": details or {}, "at": _t(at)}
