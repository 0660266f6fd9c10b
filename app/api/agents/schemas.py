from __future__ import annotations

import re

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.contact.endpoints import FORMS, dial_target, why_not
from app.models.enums import AGENT_STATES

MAX_QUEUES = 100
# The contact will be dialled as a FreeSWITCH endpoint: no whitespace and none of the dial-string
# syntax ({vars}, [vars], <vars>, "," "|" ":_:" separators) that could add channel variables such
# as api_on_answer, or extra legs.
_CONTACT = re.compile(r"[A-Za-z0-9_.@:/+*#=;%~-]{1,255}\Z")


def _contact(value: str) -> None:
    reason = why_not(value)  # a sip: URI with refused parts (fs_path, maddr, headers…): say which
    if reason:
        raise ma.ValidationError(f"{reason} One of the forms {FORMS}.")
    if not _CONTACT.match(value) or ":_:" in value:
        raise ma.ValidationError("An endpoint such as user/1001 or sofia/internal/1001@host "
                                 "(no spaces, braces, brackets, '<>', ',', '|' or ':_:').")
    if dial_target(value) is None:  # the forms the platform can dial (app/contact/endpoints.py)
        raise ma.ValidationError(f"One of the forms {FORMS}.")


class MembershipSchema(ma.Schema):
    queue_id = ma.fields.UUID(required=True)
    tier = ma.fields.Integer(load_default=limits.QUEUE_MIN_TIER,
                             validate=validate.Range(min=limits.QUEUE_MIN_TIER, max=limits.QUEUE_MAX_TIER),
                             metadata={"description": "Lower tiers are offered callers first (default 1)"})


_MEMBERSHIPS = dict(validate=validate.Length(max=MAX_QUEUES), metadata={
    "description": "Queue memberships with a tier each (instead of queue_ids, which means tier 1); replaces them"})


def _one_membership_form(_schema: ma.Schema, data: dict, **_: object) -> None:
    if "queue_ids" in data and "memberships" in data:
        raise ma.ValidationError("Give queue_ids or memberships, not both.", "memberships")


class AgentWriteSchema(ma.Schema):
    user_id = ma.fields.UUID(required=True, metadata={"description": "A user of the account (one agent per user)"})
    contact = ma.fields.String(allow_none=True, validate=_contact,
                               metadata={"description": "Where to ring the agent, e.g. user/1001"})
    queue_ids = ma.fields.List(ma.fields.UUID(), validate=validate.Length(max=MAX_QUEUES))
    memberships = ma.fields.List(ma.fields.Nested(MembershipSchema), **_MEMBERSHIPS)
    _check = ma.validates_schema(_one_membership_form)


class AgentPatchSchema(ma.Schema):
    contact = ma.fields.String(allow_none=True, validate=_contact)
    queue_ids = ma.fields.List(ma.fields.UUID(), validate=validate.Length(max=MAX_QUEUES),
                               metadata={"description": "Replaces the memberships (tier 1)"})
    memberships = ma.fields.List(ma.fields.Nested(MembershipSchema), **_MEMBERSHIPS)
    _check = ma.validates_schema(_one_membership_form)


class AgentStateSchema(ma.Schema):
    state = ma.fields.String(required=True, validate=validate.OneOf(AGENT_STATES),
                             metadata={"description": "available | not_ready | wrap_up | offline"})
    reason = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=255))


class SipCredentialsSchema(ma.Schema):
    """Shown once: the password is stored encrypted and never returned again."""

    sip_username = ma.fields.String()
    sip_password = ma.fields.String()
    sip_domain = ma.fields.String(metadata={"description": "Realm and registration domain: the account's subdomain"})


class RegistrationSchema(ma.Schema):
    """The agent's SIP registration as the switch reported it (app/contact/registrations.py)."""

    registered = ma.fields.Boolean(metadata={"description": "Registered now: calls can be offered to it"})
    contact = ma.fields.String(allow_none=True, metadata={"description": "The registered Contact URI"})
    transport = ma.fields.String(allow_none=True, metadata={"description": "udp | tcp | tls | ws | wss | other"})
    user_agent = ma.fields.String(allow_none=True, metadata={"description": "The phone's User-Agent"})
    expires_at = ma.fields.AwareDateTime(allow_none=True, metadata={"description": "When the registration "
                                                                    "lapses unless refreshed (registered only)"})
    changed_at = ma.fields.AwareDateTime(allow_none=True, metadata={
        "description": "Last change: registered, contact or transport changed, unregistered or expired "
                       "(null: never seen in the last 30 days)"})


class AgentSchema(ma.Schema):
    id = ma.fields.UUID()
    user_id = ma.fields.UUID()
    username = ma.fields.String()
    contact = ma.fields.String(allow_none=True)
    state = ma.fields.String()
    state_reason = ma.fields.String(allow_none=True)
    state_changed_at = ma.fields.AwareDateTime()
    queue_ids = ma.fields.List(ma.fields.UUID())
    memberships = ma.fields.List(ma.fields.Nested(MembershipSchema))
    sip_username = ma.fields.String(allow_none=True)
    registration = ma.fields.Nested(RegistrationSchema, allow_none=True, metadata={
        "description": "SIP registration (null when Redis, where it is kept, did not answer)"})
    created_at = ma.fields.AwareDateTime()
