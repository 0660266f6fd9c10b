from __future__ import annotations

from dataclasses import asdict

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.campaigns import dispositions, retries
from app.campaigns.retries import RETRYABLE
from app.models.enums import AMD_MODES, CAMPAIGN_STATUSES, CONTACT_STATUSES, DIALER_MODES

PHONE = validate.Regexp(r"^\+?[0-9]{1,32}\Z", error="Digits only, optionally with a leading +.")
_HHMM = validate.Regexp(r"^([01][0-9]|2[0-3]):[0-5][0-9]\Z", error="A time of day as HH:MM (24 h).")


class RetryRuleSchema(ma.Schema):
    delay_seconds = ma.fields.Integer(required=True, validate=validate.Range(
        min=0, max=limits.CAMPAIGN_RETRY_MAX_DELAY_SECONDS))
    max_attempts = ma.fields.Integer(required=True, validate=validate.Range(
        min=1, max=limits.CAMPAIGN_RETRY_MAX_ATTEMPTS))


# one rule per retryable attempt outcome; an outcome left out keeps its default (docs/campaigns.md)
RetryPolicySchema = ma.Schema.from_dict({outcome: ma.fields.Nested(RetryRuleSchema) for outcome in RETRYABLE},
                                        name="RetryPolicySchema")


class CampaignWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    dialer_mode = ma.fields.String(validate=validate.OneOf(DIALER_MODES), metadata={"description": "Default preview"})
    caller_id = ma.fields.String(allow_none=True, validate=PHONE,
                                 metadata={"description": "Must be a phone number of this account"})
    carrier_id = ma.fields.UUID(allow_none=True, metadata={"description": "Trunk: own or platform carrier"})
    agent_group_ids = ma.fields.List(ma.fields.UUID(), validate=validate.Length(max=100),
                                     metadata={"description": "Queues whose agents take connected calls"})
    status = ma.fields.String(validate=validate.OneOf(CAMPAIGN_STATUSES), metadata={
        "description": "On create: draft (default). On update: only a legal move of the state machine "
                       "(same as the start/pause/resume/stop/archive actions); else 409 illegal_transition"})
    window_start = ma.fields.String(validate=_HHMM, metadata={
        "description": f"Calling window opens, contact local time (default {limits.CAMPAIGN_DEFAULT_WINDOW[0]})"})
    window_end = ma.fields.String(validate=_HHMM, metadata={
        "description": f"Calling window closes, exclusive (default {limits.CAMPAIGN_DEFAULT_WINDOW[1]})"})
    allowed_weekdays = ma.fields.List(ma.fields.Integer(validate=validate.Range(min=1, max=7)),
                                      validate=validate.Length(min=1, max=7),
                                      metadata={"description": "ISO weekdays, 1 = Monday (default all seven)"})
    retry_policy = ma.fields.Nested(RetryPolicySchema)
    power_ratio = ma.fields.Float(validate=validate.Range(*limits.CAMPAIGN_POWER_RATIO_RANGE), metadata={
        "description": f"Power mode: lines per available agent (default {limits.CAMPAIGN_POWER_RATIO_DEFAULT})"})
    abandon_cap_percent = ma.fields.Float(validate=validate.Range(min=0.1, max=100), metadata={
        "description": f"Power and predictive: abandon-rate cap, percent of live answers over the rolling "
                       f"window (default {limits.CAMPAIGN_ABANDON_CAP_PERCENT_DEFAULT}); above it the dialer "
                       "dials 1:1"})
    safe_harbour_text = ma.fields.String(allow_none=True, validate=validate.Length(
        min=1, max=limits.CAMPAIGN_SAFE_HARBOUR_TEXT_MAX), metadata={
        "description": "Power/predictive: said to a person no agent took within "
                       f"{limits.CAMPAIGN_ABANDON_CONNECT_SECONDS:g} s, before hanging up (default: a short "
                       "apology; null with no url = the default)"})
    safe_harbour_url = ma.fields.Url(allow_none=True, schemes={"https"}, validate=validate.Length(
        max=limits.CAMPAIGN_SAFE_HARBOUR_URL_MAX), metadata={
        "description": "Power/predictive: a recording (https:// WAV/MP3 URL, checked when played) played "
                       "instead of safe_harbour_text"})
    amd = ma.fields.String(validate=validate.OneOf(AMD_MODES), metadata={
        "description": "Answering-machine detection when a customer answers: off (default, every answer is a "
                       "person), hangup (machines are hung up: outcome machine), message (leave amd_message "
                       "after the voicemail beep, then hang up: outcome machine), connect (detect, report, "
                       "connect anyway). docs/campaigns.md"})
    amd_message = ma.fields.Dict(allow_none=True, metadata={
        "description": "message mode: one say verb ({\"verb\": \"say\", \"text\": ...}) or play verb "
                       "({\"verb\": \"play\", \"url\": \"https://...\"}), as in app_json, or a file the "
                       "account uploaded with PUT /api/moh/:name ({\"audio\": \"<name>\"}; 422 unknown_audio "
                       "when it has none by that name); 422 invalid_amd_message otherwise, "
                       "amd_message_required when message mode has none"})


class CampaignPatchSchema(CampaignWriteSchema):
    """PATCH body (partial=True)."""


class CampaignSchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String()
    dialer_mode = ma.fields.String()
    caller_id = ma.fields.String(allow_none=True)
    carrier_id = ma.fields.UUID(allow_none=True)
    agent_group_ids = ma.fields.List(ma.fields.UUID())
    status = ma.fields.String()
    scheduled_at = ma.fields.AwareDateTime(allow_none=True)
    window_start = ma.fields.Time(format="%H:%M")
    window_end = ma.fields.Time(format="%H:%M")
    allowed_weekdays = ma.fields.List(ma.fields.Integer())
    retry_policy = ma.fields.Method("_retry_policy", metadata={"description": "Every outcome's rule, defaults filled in"})
    power_ratio = ma.fields.Float()
    abandon_cap_percent = ma.fields.Float()
    amd = ma.fields.String()
    amd_message = ma.fields.Dict(allow_none=True)
    safe_harbour_text = ma.fields.String(allow_none=True)
    safe_harbour_url = ma.fields.String(allow_none=True)
    status_changed_at = ma.fields.AwareDateTime()
    created_at = ma.fields.AwareDateTime()
    updated_at = ma.fields.AwareDateTime()

    def _retry_policy(self, campaign) -> dict:
        return {outcome: asdict(rule) for outcome, rule in retries.rules(campaign.retry_policy).items()}


class StartSchema(ma.Schema):
    at = ma.fields.AwareDateTime(load_default=None, metadata={
        "description": "Start at this time (state scheduled); omitted or past: run now"})


class ContactInSchema(ma.Schema):
    phone_number = ma.fields.String(required=True, validate=PHONE, metadata={"description": "E.164"})
    name = ma.fields.String(allow_none=True, validate=validate.Length(max=255))
    time_zone = ma.fields.String(allow_none=True, validate=validate.Length(max=64), metadata={
        "description": "IANA zone; omitted: derived from the number (docs/campaigns.md)"})
    attributes = ma.fields.Dict(keys=ma.fields.String(validate=validate.Length(min=1, max=64)))


class ContactsCreateSchema(ma.Schema):
    contacts = ma.fields.List(ma.fields.Nested(ContactInSchema), required=True,
                              validate=validate.Length(min=1, max=limits.CAMPAIGN_CONTACTS_JSON_MAX))


class ContactSchema(ma.Schema):
    id = ma.fields.UUID()
    campaign_id = ma.fields.UUID()
    phone_number = ma.fields.String()
    name = ma.fields.String(allow_none=True)
    attributes = ma.fields.Dict()
    status = ma.fields.String()
    attempts = ma.fields.Integer()
    skips = ma.fields.Integer(metadata={"description": "preview mode: how often agents skipped the contact"})
    last_attempt_at = ma.fields.AwareDateTime(allow_none=True)
    last_result = ma.fields.String(allow_none=True)
    last_amd_result = ma.fields.String(allow_none=True, metadata={
        "description": "the last attempt's answering-machine verdict (human, machine, notsure, none); "
                       "null when no detection ran"})
    time_zone = ma.fields.String(allow_none=True)
    time_zones = ma.fields.List(ma.fields.String())
    next_attempt_at = ma.fields.AwareDateTime(allow_none=True)
    waiting_for = ma.fields.String(allow_none=True, dump_default=None, metadata={
        "description": "pending and not due now: calling_window (closed now in its zones) or retry "
                       "(next_attempt_at to come); null otherwise (docs/campaigns.md)"})
    disposition = ma.fields.String(allow_none=True)
    disposition_note = ma.fields.String(allow_none=True)
    disposed_at = ma.fields.AwareDateTime(allow_none=True)
    created_at = ma.fields.AwareDateTime()


class ContactsCreatedSchema(ma.Schema):
    created = ma.fields.Integer()
    items = ma.fields.List(ma.fields.Nested(ContactSchema))


class ContactsImportedSchema(ma.Schema):
    created = ma.fields.Integer()


class ContactListQuerySchema(ma.Schema):
    limit = ma.fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))
    cursor = ma.fields.String(load_default=None, validate=validate.Length(max=512))
    status = ma.fields.String(validate=validate.OneOf(CONTACT_STATUSES))


class DispositionSchema(ma.Schema):
    disposition = ma.fields.String(required=True, validate=validate.Regexp(
        dispositions.CONTACT_CODE, error=f"{dispositions.CONTACT_CODE_RULE} (e.g. sale, callback_later)."))
    note = ma.fields.String(load_default=None, allow_none=True,
                            validate=validate.Length(max=limits.CAMPAIGN_DISPOSITION_NOTE_MAX_LENGTH))


class AttemptFiguresSchema(ma.Schema):
    dialled = ma.fields.Integer(metadata={"description": "attempts that ended (the sum of the outcomes)"})
    human = ma.fields.Integer()
    machine = ma.fields.Integer()
    no_answer = ma.fields.Integer()
    busy = ma.fields.Integer()
    failed = ma.fields.Integer()
    abandoned = ma.fields.Integer()
    skipped = ma.fields.Integer(metadata={"description": "preview offers skipped by agents (no call placed)"})


class AgentFiguresSchema(ma.Schema):
    total = ma.fields.Integer()
    waiting = ma.fields.Integer(metadata={"description": "available and idle"})
    busy = ma.fields.Integer(metadata={"description": "available and engaged: offered, ringing or talking"})
    wrap_up = ma.fields.Integer()
    away = ma.fields.Integer(metadata={"description": "not ready or offline"})


class CallFiguresSchema(ma.Schema):
    ringing = ma.fields.Integer(metadata={"description": "placed, not answered yet"})
    screening = ma.fields.Integer(metadata={"description": "answered, the answering-machine verdict not in yet"})
    waiting = ma.fields.Integer(metadata={"description": "a person waiting (at most 2 s) for an agent"})
    talking = ma.fields.Integer(metadata={"description": "with an agent"})


ContactFiguresSchema = ma.Schema.from_dict(
    {name: ma.fields.Integer() for name in ("total", *CONTACT_STATUSES, "left")}, name="ContactFiguresSchema")


class CampaignFiguresSchema(ma.Schema):
    campaign_id = ma.fields.UUID()
    status = ma.fields.String()
    dialer_mode = ma.fields.String()
    attempts = ma.fields.Nested(AttemptFiguresSchema)
    abandon_rate_percent = ma.fields.Float(allow_none=True, metadata={
        "description": "abandoned / (human + abandoned) since the campaign began; null before the first live answer"})
    abandon_cap_percent = ma.fields.Float()
    over_cap = ma.fields.Boolean()
    agents = ma.fields.Nested(AgentFiguresSchema)
    calls = ma.fields.Nested(CallFiguresSchema, metadata={"description": "the calls in flight as the dialer sees them"})
    contacts = ma.fields.Nested(ContactFiguresSchema, metadata={
        "description": "contacts per status; left = pending + in_progress"})
