"""Application bodies. Secrets (Basic-auth password) are write-only; only their presence shows."""
from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app.models.enums import HOOK_METHODS

URL_MAX = 2048
LANGUAGE_PATTERN = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*\Z"


class ApplicationWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    call_flow_sid = ma.fields.UUID(allow_none=True, metadata={"description": "A call flow of this account"})
    call_hook_url = ma.fields.String(
        allow_none=True, validate=validate.Length(min=1, max=URL_MAX),
        metadata={"description": "https:// webhook or wss:// WebSocket handler; must be public"},
    )
    call_hook_method = ma.fields.String(validate=validate.OneOf(HOOK_METHODS))
    call_status_hook_url = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=URL_MAX))
    app_json = ma.fields.Raw(
        allow_none=True, metadata={"description": "Static verb list, validated all-or-nothing"}
    )
    language = ma.fields.String(validate=[validate.Length(max=16),  # applications.language column
                                          validate.Regexp(LANGUAGE_PATTERN, error="Use a tag like en-US.")])
    voice = ma.fields.String(validate=validate.Length(min=1, max=64))
    basic_auth_username = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=255))
    basic_auth_password = ma.fields.String(
        allow_none=True, load_only=True, validate=validate.Length(min=1, max=255),
        metadata={"description": "Write-only; stored encrypted"},
    )


class ApplicationPatchSchema(ApplicationWriteSchema):
    """PATCH body: every field optional (instantiate with ``partial=True``)."""


class ApplicationSchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String()
    call_flow_sid = ma.fields.UUID(allow_none=True)
    call_hook_url = ma.fields.String(allow_none=True)
    call_hook_method = ma.fields.String()
    call_status_hook_url = ma.fields.String(allow_none=True)
    app_json = ma.fields.Raw(allow_none=True)
    language = ma.fields.String()
    voice = ma.fields.String()
    basic_auth_username = ma.fields.String(allow_none=True)
    has_basic_auth_password = ma.fields.Function(lambda a: a.basic_auth_password_encrypted is not None)
    signing_secret_last4 = ma.fields.String(allow_none=True)
    has_signing_secret = ma.fields.Function(lambda a: a.signing_secret_encrypted is not None)
    created_at = ma.fields.AwareDateTime()
    updated_at = ma.fields.AwareDateTime()
