from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app.models.enums import CAMPAIGN_STATUSES, CONTACT_STATUSES, DIALER_MODES

MAX_CONTACTS_PER_REQUEST = 1000
PHONE = validate.Regexp(r"^\+?[0-9]{1,32}\Z", error="Digits only, optionally with a leading +.")


class CampaignWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    dialer_mode = ma.fields.String(validate=validate.OneOf(DIALER_MODES), metadata={"description": "Default preview"})
    caller_id = ma.fields.String(allow_none=True, validate=PHONE,
                                 metadata={"description": "Must be a phone number of this account"})
    carrier_id = ma.fields.UUID(allow_none=True, metadata={"description": "Trunk: own or platform carrier"})
    agent_group_ids = ma.fields.List(ma.fields.UUID(), validate=validate.Length(max=100),
                                     metadata={"description": "Queues whose agents take connected calls"})
    status = ma.fields.String(validate=validate.OneOf(CAMPAIGN_STATUSES), metadata={"description": "Default draft"})


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
    created_at = ma.fields.AwareDateTime()
    updated_at = ma.fields.AwareDateTime()


class ContactInSchema(ma.Schema):
    phone_number = ma.fields.String(required=True, validate=PHONE)
    name = ma.fields.String(allow_none=True, validate=validate.Length(max=255))
    attributes = ma.fields.Dict(keys=ma.fields.String(validate=validate.Length(min=1, max=64)))


class ContactsCreateSchema(ma.Schema):
    contacts = ma.fields.List(ma.fields.Nested(ContactInSchema), required=True,
                              validate=validate.Length(min=1, max=MAX_CONTACTS_PER_REQUEST))


class ContactSchema(ma.Schema):
    id = ma.fields.UUID()
    campaign_id = ma.fields.UUID()
    phone_number = ma.fields.String()
    name = ma.fields.String(allow_none=True)
    attributes = ma.fields.Dict()
    status = ma.fields.String()
    attempts = ma.fields.Integer()
    last_attempt_at = ma.fields.AwareDateTime(allow_none=True)
    last_result = ma.fields.String(allow_none=True)
    created_at = ma.fields.AwareDateTime()


class ContactsCreatedSchema(ma.Schema):
    created = ma.fields.Integer()
    items = ma.fields.List(ma.fields.Nested(ContactSchema))


class ContactListQuerySchema(ma.Schema):
    limit = ma.fields.Integer(load_default=50, validate=validate.Range(min=1, max=200))
    cursor = ma.fields.String(load_default=None, validate=validate.Length(max=512))
    status = ma.fields.String(validate=validate.OneOf(CONTACT_STATUSES))
