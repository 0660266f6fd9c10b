from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits


class QueueWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255),
                            metadata={"description": "Unique in the account; the queue verb's name"})
    moh = ma.fields.String(validate=validate.Length(min=1, max=255), metadata={"description": "Default 'default'"})
    max_wait_seconds = ma.fields.Integer(validate=validate.Range(min=1, max=86_400), metadata={
        "description": f"Default {limits.QUEUE_DEFAULT_MAX_WAIT_SECONDS}"})
    announce_position = ma.fields.Boolean()
    announce_interval_seconds = ma.fields.Integer(validate=validate.Range(min=5, max=3600), metadata={
        "description": f"Default {limits.QUEUE_DEFAULT_ANNOUNCE_INTERVAL_SECONDS}"})
    timeout_hook_url = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=2048),
                                        metadata={"description": "https://, public; called when the wait runs out"})


class QueuePatchSchema(QueueWriteSchema):
    """PATCH body (partial=True)."""


class QueueSchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String()
    moh = ma.fields.String()
    max_wait_seconds = ma.fields.Integer()
    announce_position = ma.fields.Boolean()
    announce_interval_seconds = ma.fields.Integer()
    timeout_hook_url = ma.fields.String(allow_none=True)
    created_at = ma.fields.AwareDateTime()
