"""Bodies of POST /api/calls (camelCase like the webhook and the verbs it leads to)."""
from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.api.callbacks.schemas import PhoneNumberField
from app.calls import live_calls
from app.calls.transfers import InvalidTarget, parse_target
from app.verbs.fields import HookUrl, https_url


class CallCreateSchema(ma.Schema):
    to = PhoneNumberField(required=True, metadata={"description": "Number to dial (LCR applies)"})
    from_ = PhoneNumberField(required=True, data_key="from",
                             metadata={"description": "Caller id; a number the account owns"})
    application_sid = ma.fields.UUID(metadata={
        "description": "The application that drives the call once answered (required; "
                       "`applicationSid` is accepted too, the v1 spelling)"})
    applicationSid = ma.fields.UUID(metadata={"description": "Deprecated spelling of application_sid"})
    timeout = ma.fields.Integer(
        load_default=limits.DIAL_DEFAULT_RING_TIMEOUT_SECONDS, strict=True,
        validate=validate.Range(min=1, max=limits.DIAL_MAX_RING_TIMEOUT_SECONDS),
        metadata={"description": "Ring timeout in seconds"})


    @ma.validates_schema
    def _one_application(self, data: dict, **_: object) -> None:
        given = [k for k in ("application_sid", "applicationSid") if k in data]
        if not given:
            raise ma.ValidationError({"application_sid": ["Missing data for required field."]})
        if len(given) == 2 and data["application_sid"] != data["applicationSid"]:
            raise ma.ValidationError({"applicationSid": ["Send application_sid only."]})

    @ma.post_load
    def _fold(self, data: dict, **_: object) -> dict:
        data["application_sid"] = data.pop("applicationSid", None) or data.get("application_sid")
        return data


class CallQueuedSchema(ma.Schema):
    call_id = ma.fields.UUID(metadata={"description": "The new leg's id (webhook callId; GET /api/calls/:callId)"})
    trace_id = ma.fields.UUID(metadata={"description": "The conversation id (call record trace_id)"})
    status = ma.fields.String(metadata={"description": "queued"})
    callId = ma.fields.UUID(metadata={"description": "Deprecated v1 spelling of call_id"})
    traceId = ma.fields.UUID(metadata={"description": "Deprecated v1 spelling of trace_id"})


class CallStateSchema(ma.Schema):
    """GET /api/calls/:callId (snake_case, like every other resource: docs/api.md "Conventions")."""
    call_id = ma.fields.UUID()
    trace_id = ma.fields.UUID(allow_none=True)
    state = ma.fields.String(metadata={"description": "queued, ringing, in-progress, completed, failed"})
    reason = ma.fields.String(allow_none=True, metadata={
        "description": "why it failed (no_freeswitch, no_route, caller_id_not_owned, busy, no_answer, ...); "
                       "the call record's hangup_reason"})
    call_record_id = ma.fields.UUID(allow_none=True, metadata={"description": "GET /api/call-records/:id"})
    record_status = ma.fields.String(allow_none=True)
    hangup_cause = ma.fields.String(allow_none=True)
    direction = ma.fields.String()
    started_at = ma.fields.AwareDateTime(allow_none=True)
    answered_at = ma.fields.AwareDateTime(allow_none=True)
    ended_at = ma.fields.AwareDateTime(allow_none=True)


class SuperviseTargetSchema(ma.Schema):
    class Meta:
        unknown = ma.RAISE

    type = ma.fields.String(required=True, validate=validate.OneOf(("user",)),
                            metadata={"description": "user: a SIP user of this account's directory"})
    name = ma.fields.String(required=True, validate=validate.Regexp(
        r"^[A-Za-z0-9_.+\-]{1,64}\Z", error="A SIP user name: letters, digits, '_', '.', '+', '-'."),
        metadata={"description": "The SIP user name (an agent's sip_username)"})


class SuperviseSchema(ma.Schema):
    """POST /api/calls/:callId/supervise."""

    class Meta:
        unknown = ma.RAISE

    mode = ma.fields.String(required=True, validate=validate.OneOf(("listen", "whisper", "barge")),
                            metadata={"description": "listen (nobody hears you), whisper (only the "
                                                     "agent hears you), barge (both parties hear you)"})
    target = ma.fields.Nested(SuperviseTargetSchema, metadata={
        "description": "Where to ring the supervisor; default: the phone of your own agent profile"})
    timeout = ma.fields.Integer(
        load_default=limits.SUPERVISOR_RING_SECONDS, strict=True, validate=validate.Range(min=5, max=120),
        metadata={"description": "Seconds the supervisor's phone rings"})


class SupervisionSchema(ma.Schema):
    supervision_id = ma.fields.UUID(metadata={"description": "Also the supervisor leg's channel id"})
    call_id = ma.fields.UUID()
    mode = ma.fields.String()
    previous_mode = ma.fields.String(metadata={"description": "On a mode change"})
    state = ma.fields.String(metadata={"description": "dialing (the supervisor's phone rings) or active"})
    supervisor_id = ma.fields.UUID(metadata={"description": "The supervising user"})
    agent_id = ma.fields.UUID(allow_none=True, metadata={"description": "The call's agent"})
    endpoint = ma.fields.String(metadata={"description": "What is dialled for the supervisor"})


# -- POST /api/calls/:callId/actions (live call control) ---------------------------------------
class LiveActionSchema(ma.Schema):
    """One action on a call in progress (docs/api.md "Controlling a live call")."""

    class Meta:
        unknown = ma.RAISE

    action = ma.fields.String(required=True, validate=validate.OneOf(live_calls.ACTIONS), metadata={
        "description": "hangup | dtmf | mute | unmute | hold | unhold | redirect | record_start | "
                       "record_stop | whisper | transfer | conference"})
    reason = ma.fields.String(
        validate=[validate.Length(min=1, max=limits.LIVE_CONTROL_HANGUP_REASON_MAX),
                  validate.Regexp(r"[A-Za-z0-9_.:-]+\Z", error="letters, digits and _ . : - only")],
        metadata={"description": "hangup: kept as the call record's hangup_reason (default `api`)"})
    digits = ma.fields.String(
        validate=[validate.Length(min=1, max=limits.AGENT_CHANNEL_DTMF_MAX_DIGITS),
                  validate.Regexp(r"[0-9A-Da-d*#]+\Z", error="0-9 A-D * # only")],
        metadata={"description": "dtmf: the digits sent to the caller (RFC 2833)"})
    verbs = ma.fields.List(ma.fields.Dict(), metadata={
        "description": "redirect: the verbs the call runs instead of the rest of its current list "
                       "(validated like an application's app_json)"})
    hookUrl = HookUrl(metadata={
        "description": "redirect: fetch the new verbs from this URL (posted like a `redirect` "
                       "verb's request) instead of giving them"})

    text = ma.fields.String(validate=validate.Length(min=1, max=limits.LIVE_CONTROL_WHISPER_TEXT_MAX), metadata={
        "description": "whisper: what is said (text to speech) to one leg only"})
    url = https_url(metadata={
        "description": "whisper: an audio file (WAV or MP3, https) played to one leg only, instead "
                       "of `text`; its address is checked when it is played, like a `play` verb's"})
    leg = ma.fields.String(validate=validate.OneOf(("caller", "bridged")), metadata={
        "description": "whisper: `caller` (default) or `bridged` (the party the caller is bridged to)"})

    target = ma.fields.Dict(metadata={
        "description": "transfer: where the caller goes (blind; the call must be with an agent): "
                       "`{type: agent, agentId}`, `{type: queue, name}`, `{type: number, number, "
                       "callerId?}` or `{type: sip, uri}` (docs/agents.md \"Transfers\")"})

    @ma.validates_schema
    def _fields_of_action(self, data: dict, **_: object) -> None:
        action = data.get("action")
        allowed = _LIVE_FIELDS.get(action, frozenset())
        extra = sorted(k for k in _ACTION_FIELDS if k in data and k not in allowed)
        if extra:
            raise ma.ValidationError({k: [f"Not a field of '{action}'."] for k in extra})
        if action == "dtmf" and "digits" not in data:
            raise ma.ValidationError({"digits": ["Missing data for required field."]})
        if action == "redirect" and ("verbs" in data) == ("hookUrl" in data):
            raise ma.ValidationError({"verbs": ["Give exactly one of verbs and hookUrl."]})
        if action == "whisper" and not (data.get("text") or "").strip() and "url" not in data:
            raise ma.ValidationError({"text": ["Give text or url."]})
        if action == "whisper" and "text" in data and "url" in data:
            raise ma.ValidationError({"url": ["Give exactly one of text and url."]})
        if action == "transfer":
            try:
                parse_target(data.get("target"))
            except InvalidTarget as exc:
                raise ma.ValidationError({"target": [str(exc)]}) from None


_LIVE_FIELDS: dict[str, frozenset[str]] = {
    "hangup": frozenset({"reason"}), "dtmf": frozenset({"digits"}),
    "redirect": frozenset({"verbs", "hookUrl"}), "whisper": frozenset({"text", "url", "leg"}),
    "transfer": frozenset({"target"}),
}
_ACTION_FIELDS = ("reason", "digits", "verbs", "hookUrl", "text", "url", "leg", "target")


class LiveCallStateSchema(ma.Schema):
    answered = ma.fields.Boolean()
    muted = ma.fields.Boolean()
    held = ma.fields.Boolean(metadata={"description": "the bridged party held by `hold`"})
    recording = ma.fields.Boolean(metadata={"description": "a recording started by `record_start` runs"})
    bridged = ma.fields.Boolean(metadata={"description": "bridged to another party (dial, queue agent)"})


class LiveActionResultSchema(ma.Schema):
    call_id = ma.fields.UUID()
    action = ma.fields.String()
    state = ma.fields.Nested(LiveCallStateSchema, metadata={"description": "the call after the action"})
