from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

MAX_QUEUES = 100


class AgentWriteSchema(ma.Schema):
    user_id = ma.fields.UUID(required=True, metadata={"description": "A user of the account (one agent per user)"})
    contact = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=255),
                               metadata={"description": "Where to ring the agent, e.g. user/1001"})
    queue_ids = ma.fields.List(ma.fields.UUID(), validate=validate.Length(max=MAX_QUEUES))


class AgentPatchSchema(ma.Schema):
    contact = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=255))
    queue_ids = ma.fields.List(ma.fields.UUID(), validate=validate.Length(max=MAX_QUEUES),
                               metadata={"description": "Replaces the memberships"})


class AgentSchema(ma.Schema):
    id = ma.fields.UUID()
    user_id = ma.fields.UUID()
    username = ma.fields.String()
    contact = ma.fields.String(allow_none=True)
    state = ma.fields.String()
    state_reason = ma.fields.String(allow_none=True)
    state_changed_at = ma.fields.AwareDateTime()
    queue_ids = ma.fields.List(ma.fields.UUID())
    created_at = ma.fields.AwareDateTime()
