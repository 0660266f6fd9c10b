from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.api.campaigns.schemas import PHONE


class DncInSchema(ma.Schema):
    number = ma.fields.String(required=True, validate=PHONE, metadata={"description": "E.164"})
    reason = ma.fields.String(load_default=None, allow_none=True, validate=validate.Length(max=255))


class DncCreateSchema(ma.Schema):
    numbers = ma.fields.List(ma.fields.Nested(DncInSchema), required=True,
                             validate=validate.Length(min=1, max=limits.DNC_JSON_MAX))


class DncSchema(ma.Schema):
    id = ma.fields.UUID()
    number = ma.fields.String()
    reason = ma.fields.String(allow_none=True)
    created_at = ma.fields.AwareDateTime()


class DncAddedSchema(ma.Schema):
    added = ma.fields.Integer(metadata={"description": "Numbers new to the list (already listed ones are kept)"})
