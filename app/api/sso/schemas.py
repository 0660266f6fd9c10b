from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.api.auth.tokens import SESSIONS
from app.models.enums import USER_ROLES

CALLBACK_PATH = "/auth/sso/callback"


class SsoOptionsSchema(ma.Schema):
    enabled = ma.fields.Boolean(metadata={"description": "The login page offers \"Sign in with …\""})
    display_name = ma.fields.String(allow_none=True, metadata={"description": "The button's label"})
    start_url = ma.fields.String(allow_none=True, metadata={"description": "Where the button sends the browser"})


class SsoStartQuerySchema(ma.Schema):
    session = ma.fields.String(validate=validate.OneOf(SESSIONS), metadata={
        "description": "The session to open (as for /auth/login); default: the first open to the user"})
    redirect_path = ma.fields.String(
        load_default=CALLBACK_PATH,
        validate=validate.Regexp(r"^/[A-Za-z0-9/_.~-]{0,199}\Z", error="a path on this host: /, then up to "
                                 "199 letters, digits, / _ . ~ -"),
        metadata={"description": "Where the provider sends the browser back, on this same host "
                                 "(default /auth/sso/callback; a console page that POSTs code and "
                                 "state to /auth/sso/callback). Register it at the provider."})


class SsoStartSchema(ma.Schema):
    authorization_url = ma.fields.String()
    expires_in = ma.fields.Integer(metadata={"description": "Seconds the sign-in may take"})


class SsoCallbackQuerySchema(ma.Schema):
    state = ma.fields.String(required=True, validate=validate.Length(min=1, max=512))
    code = ma.fields.String(validate=validate.Length(min=1, max=2048))
    error = ma.fields.String(validate=validate.Length(max=256), metadata={
        "description": "The provider refused (the user cancelled, ...): answered sso_denied"})
    error_description = ma.fields.String(validate=validate.Length(max=1024))
    iss = ma.fields.String(validate=validate.Length(max=2048), metadata={
        "description": "RFC 9207 issuer identification, when the provider sends it"})
    session_state = ma.fields.String(validate=validate.Length(max=512), metadata={
        "description": "Sent by some providers (session management); ignored"})


class SsoCallbackBodySchema(ma.Schema):
    state = ma.fields.String(required=True, validate=validate.Length(min=1, max=512))
    code = ma.fields.String(required=True, validate=validate.Length(min=1, max=2048))


class RoleRuleSchema(ma.Schema):
    value = ma.fields.String(required=True, validate=validate.Length(min=1, max=255),
                             metadata={"description": "A value of the role claim"})
    role = ma.fields.String(required=True, validate=validate.OneOf(USER_ROLES))


class SsoConfigWriteSchema(ma.Schema):
    issuer = ma.fields.String(required=True, validate=[
        validate.Length(min=1, max=2048),
        validate.Regexp(r"^[^?#]*\Z", error="An issuer URL has no query or fragment.")],
        metadata={"description": "The provider's issuer identifier (https://…), exactly as in its "
                                 "discovery document and its ID tokens"})
    client_id = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    client_secret = ma.fields.String(load_only=True, validate=validate.Length(min=1, max=1024), metadata={
        "description": "Write only, stored encrypted. Required the first time; omit to keep the stored one"})
    display_name = ma.fields.String(required=True, validate=validate.Length(min=1, max=100),
                                    metadata={"description": "The login button says \"Sign in with <display_name>\""})
    role_claim = ma.fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=100),
                                  metadata={"description": "The ID token claim read for the role (e.g. groups)"})
    role_mapping = ma.fields.List(ma.fields.Nested(RoleRuleSchema), load_default=list,
                                  validate=validate.Length(max=limits.SSO_ROLE_MAPPING_MAX),
                                  metadata={"description": "First rule whose value the claim holds wins"})
    default_role = ma.fields.String(load_default=None, allow_none=True, validate=validate.OneOf(USER_ROLES),
                                    metadata={"description": "When no rule matches; null: refuse the sign-in"})
    create_users = ma.fields.Boolean(load_default=False, metadata={
        "description": "A first sign-in creates the user (else an unknown person is refused)"})
    enabled = ma.fields.Boolean(load_default=True)


class SsoLinkWriteSchema(ma.Schema):
    subject = ma.fields.String(required=True, validate=validate.Length(min=1, max=255), metadata={
        "description": "The person's `sub` at the account's identity provider (stable, not the e-mail)"})


class SsoLinkSchema(ma.Schema):
    issuer = ma.fields.String()
    subject = ma.fields.String()


class SsoConfigSchema(ma.Schema):
    issuer = ma.fields.String()
    client_id = ma.fields.String()
    client_secret_set = ma.fields.Boolean(metadata={"description": "The secret itself is never returned"})
    display_name = ma.fields.String()
    role_claim = ma.fields.String(allow_none=True)
    role_mapping = ma.fields.List(ma.fields.Nested(RoleRuleSchema))
    default_role = ma.fields.String(allow_none=True)
    create_users = ma.fields.Boolean()
    enabled = ma.fields.Boolean()
    redirect_uri = ma.fields.String(metadata={"description": "Register this redirect URI at the provider"})
    updated_at = ma.fields.AwareDateTime()
