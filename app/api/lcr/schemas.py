from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits

PRIORITY = validate.Range(min=0, max=1_000_000)


class LcrWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    is_active = ma.fields.Boolean()
    priority = ma.fields.Integer(validate=PRIORITY, metadata={"description": "Plans are tried lowest first"})


class LcrPatchSchema(LcrWriteSchema):
    """PATCH body (partial=True)."""


class LcrSchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String()
    is_active = ma.fields.Boolean()
    priority = ma.fields.Integer()
    created_at = ma.fields.AwareDateTime()


class RouteWriteSchema(ma.Schema):
    regex = ma.fields.String(
        required=True, validate=validate.Length(min=1, max=limits.ROUTE_REGEX_MAX_LENGTH), metadata={
            "description": "RE2 regular expression matched at the start of the dialled digits "
                           f"(1-{limits.ROUTE_REGEX_MAX_LENGTH} characters)"})
    priority = ma.fields.Integer(validate=PRIORITY, metadata={"description": "Routes are tried lowest first"})
    description = ma.fields.String(allow_none=True, validate=validate.Length(max=2000))


class RoutePatchSchema(RouteWriteSchema):
    """PATCH body (partial=True)."""


class RouteSchema(ma.Schema):
    id = ma.fields.UUID()
    lcr_id = ma.fields.UUID()
    regex = ma.fields.String()
    priority = ma.fields.Integer()
    description = ma.fields.String(allow_none=True)
    created_at = ma.fields.AwareDateTime()


class EntryWriteSchema(ma.Schema):
    carrier_id = ma.fields.UUID(required=True, metadata={"description": "The account's carrier or a platform carrier"})
    priority = ma.fields.Integer(validate=PRIORITY, metadata={"description": "Tried ascending"})
    workload = ma.fields.Integer(validate=validate.Range(min=0, max=1_000_000),
                                 metadata={"description": "Weight; higher first among equal priority"})


class EntryPatchSchema(ma.Schema):
    priority = ma.fields.Integer(validate=PRIORITY)
    workload = ma.fields.Integer(validate=validate.Range(min=0, max=1_000_000))


class EntrySchema(ma.Schema):
    id = ma.fields.UUID()
    lcr_route_id = ma.fields.UUID()
    carrier_id = ma.fields.UUID()
    priority = ma.fields.Integer()
    workload = ma.fields.Integer()
    created_at = ma.fields.AwareDateTime()
