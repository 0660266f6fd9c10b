from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits


class AccountSchema(ma.Schema):
    id = ma.fields.UUID()
    subdomain = ma.fields.String()
    name = ma.fields.String()
    licenses = ma.fields.List(ma.fields.String())
    max_concurrent_calls = ma.fields.Integer(metadata={"description": "0 = unlimited"})
    mfa_required = ma.fields.Boolean(metadata={"description": "Every user must sign in with a "
                                                              "TOTP second factor"})
    created_at = ma.fields.AwareDateTime()


class AccountPatchSchema(ma.Schema):
    max_concurrent_calls = ma.fields.Integer(
        required=True, strict=True, validate=validate.Range(min=0, max=limits.PG_INTEGER_MAX),
        metadata={"description": "Lower than the current limit (or any value when unlimited); "
                                 "raising it is the operator's `sbc tenant update`"})


class AccountMfaSchema(ma.Schema):
    required = ma.fields.Boolean(required=True, metadata={
        "description": "true: every user must sign in with a TOTP second factor"})
