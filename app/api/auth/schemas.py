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


_CODE = ma.fields.String(
    required=True, validate=validate.Length(min=1, max=64),
    metadata={"description": "The 6-digit code of the authenticator app, or a recovery code "
                             "(XXXX-XXXX-XXXX-XXXX; separators and case do not matter)"})
_RESTRICTED_TOKEN = validate.Length(min=1, max=4096)


class MfaLoginSchema(ma.Schema):
    challenge_token = ma.fields.String(
        required=True, load_only=True, validate=_RESTRICTED_TOKEN,
        metadata={"description": "details.challenge_token of the login's 401 mfa_required"})
    code = ma.fields.String(required=True, load_only=True, validate=_CODE.validate,
                            metadata=_CODE.metadata)


class EnrolSchema(ma.Schema):
    enrolment_token = ma.fields.String(
        load_only=True, validate=_RESTRICTED_TOKEN,
        metadata={"description": "details.enrolment_token of the login's 403 "
                                 "mfa_enrolment_required; omit when sending a Bearer session token"})


class EnrolmentSchema(ma.Schema):
    secret = ma.fields.String(required=True, metadata={"description": "Base32 secret for manual "
                                                                      "entry; shown once"})
    otpauth_uri = ma.fields.String(required=True, metadata={"description": "otpauth://totp/… URI; shown once"})
    qr_svg = ma.fields.String(required=True, metadata={"description": "The URI as a QR code: an "
                                                                      "SVG data: URI for <img src>"})
    digits = ma.fields.Integer(required=True)
    period = ma.fields.Integer(required=True, metadata={"description": "Seconds per code"})


class ConfirmSchema(EnrolSchema):
    code = ma.fields.String(required=True, load_only=True,
                            validate=validate.Length(min=1, max=64),
                            metadata={"description": "The code the app shows now"})


class RecoveryCodesSchema(ma.Schema):
    recovery_codes = ma.fields.List(ma.fields.String(), required=True,
                                    metadata={"description": "Single-use codes; shown once"})


class ConfirmedSchema(RecoveryCodesSchema):
    enrolled_at = ma.fields.AwareDateTime(required=True)
    login = ma.fields.Nested(TokenResponseSchema, allow_none=True, metadata={
        "description": "The session (the login body) when confirmed with an enrolment token"})


class RegenerateSchema(ma.Schema):
    code = ma.fields.String(required=True, load_only=True, validate=validate.Length(min=1, max=64),
                            metadata={"description": "A current authenticator code"})


class MfaStatusSchema(ma.Schema):
    totp = ma.fields.String(required=True, metadata={"description": "none | pending | enrolled"})
    enrolled_at = ma.fields.AwareDateTime(allow_none=True)
    recovery_codes_left = ma.fields.Integer(required=True)
    required_by_account = ma.fields.Boolean(required=True)
