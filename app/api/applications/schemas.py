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


class VerbListCheckSchema(ma.Schema):
    app_json = ma.fields.Raw(required=True, metadata={"description": "The verb list to check (not saved)"})


class _VerbProblemSchema(ma.Schema):
    index = ma.fields.Integer(allow_none=True, metadata={"description": "Position in the list"})
    verb = ma.fields.String(allow_none=True)
    field = ma.fields.String(allow_none=True, metadata={"description": "Dotted path inside the item"})
    path = ma.fields.String(metadata={"description": "JSON Pointer inside app_json, e.g. /1/target/0/name"})
    message = ma.fields.String()


class VerbListVerdictSchema(ma.Schema):
    valid = ma.fields.Boolean()
    verbs = ma.fields.List(ma.fields.String(), metadata={"description": "The verbs that would run, in order"})
    errors = ma.fields.List(ma.fields.Nested(_VerbProblemSchema))
    warnings = ma.fields.List(ma.fields.Nested(_VerbProblemSchema),
                              metadata={"description": "e.g. verbs after one that ends the list"})


class TryQuerySchema(ma.Schema):
    from_number = ma.fields.String(data_key="from", load_default="15550100001",
                                   validate=validate.Regexp(r"^\d{1,32}\Z", error="Digits only."))
    to_number = ma.fields.String(data_key="to", load_default="15550100002",
                                 validate=validate.Regexp(r"^\d{1,32}\Z", error="Digits only."))
    direction = ma.fields.String(load_default="inbound", validate=validate.OneOf(("inbound", "outbound")))


class _TryRequestSchema(ma.Schema):
    method = ma.fields.String()
    url = ma.fields.String()
    signed = ma.fields.Boolean(metadata={"description": "X-Signature sent (the number's signing secret)"})
    basic_auth = ma.fields.Boolean(metadata={"description": "Basic authentication sent"})
    body = ma.fields.Dict(metadata={"description": "The first request of a call (SPEC fields)"})


class _TryFailureSchema(ma.Schema):
    reason = ma.fields.String(metadata={"description": "Webhook client reason code (docs/webhooks.md)"})
    detail = ma.fields.String(allow_none=True)
    attempts = ma.fields.Integer()
    last_status = ma.fields.Integer(allow_none=True)
    line = ma.fields.String(metadata={"description": "The line `sbc webhook try` prints"})
    hint = ma.fields.String(allow_none=True)


class TryResultSchema(ma.Schema):
    outcome = ma.fields.String(metadata={"description": "accepted | rejected | failed"})
    request = ma.fields.Nested(_TryRequestSchema)
    elapsed_ms = ma.fields.Float(allow_none=True)
    steps = ma.fields.List(ma.fields.String(), metadata={"description": "What the call would do, in order"})
    errors = ma.fields.List(ma.fields.String(), metadata={"description": "Why the reply is rejected"})
    warnings = ma.fields.List(ma.fields.String())
    failure = ma.fields.Nested(_TryFailureSchema, allow_none=True)
