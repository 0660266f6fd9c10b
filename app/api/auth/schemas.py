"""Bodies of /auth/* (the spec leaves them open; shaped like common token endpoints)."""
from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app.api.auth.tokens import SESSIONS


class LoginSchema(ma.Schema):
    username = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    password = ma.fields.String(
        required=True, load_only=True, validate=validate.Length(min=1, max=1024)
    )
    session = ma.fields.String(
        validate=validate.OneOf(SESSIONS),
        metadata={"description": "admin or agent; default: admin when the role allows it, else agent"},
    )


class ExchangeSchema(ma.Schema):
    session = ma.fields.String(
        validate=validate.OneOf(SESSIONS),
        metadata={"description": "Session wanted; default: the other one"},
    )


class TokenUserSchema(ma.Schema):
    id = ma.fields.UUID()
    username = ma.fields.String()
    role = ma.fields.String()
    permissions = ma.fields.List(ma.fields.String(), metadata={"description": "Effective permissions"})
    agent_id = ma.fields.UUID(allow_none=True, metadata={"description": "The user's agent profile, if any"})


class TokenAccountSchema(ma.Schema):
    id = ma.fields.UUID()
    subdomain = ma.fields.String()
    licenses = ma.fields.List(ma.fields.String())


class TokenResponseSchema(ma.Schema):
    token = ma.fields.String(required=True)
    token_type = ma.fields.String(required=True, metadata={"description": "Always 'Bearer'"})
    expires_in = ma.fields.Integer(required=True, metadata={"description": "Seconds"})
    expires_at = ma.fields.AwareDateTime(required=True)
    session = ma.fields.String(required=True)
    user = ma.fields.Nested(TokenUserSchema)
    account = ma.fields.Nested(TokenAccountSchema)
