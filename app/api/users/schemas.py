from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app.accounts.passwords import MAX_PASSWORD_BYTES
from app.models.enums import PERMISSIONS, USER_ROLES

PASSWORD_MIN = 10


def _password(value: str) -> None:
    if len(value) < PASSWORD_MIN:
        raise ma.ValidationError(f"At least {PASSWORD_MIN} characters.")
    if len(value.encode("utf-8")) > MAX_PASSWORD_BYTES:
        raise ma.ValidationError(f"At most {MAX_PASSWORD_BYTES} bytes (bcrypt would ignore the rest).")


class UserWriteSchema(ma.Schema):
    username = ma.fields.String(required=True, validate=validate.Regexp(
        r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,254}\Z", error="1-255 letters, digits, _ . @ -"))
    password = ma.fields.String(required=True, load_only=True, validate=_password)
    role = ma.fields.String(validate=validate.OneOf(USER_ROLES), metadata={"description": "Default agent"})
    permissions = ma.fields.List(ma.fields.String(validate=validate.OneOf(PERMISSIONS)))
    email = ma.fields.Email(allow_none=True, validate=validate.Length(max=320))  # users.email column
    is_active = ma.fields.Boolean()


class UserPatchSchema(UserWriteSchema):
    """PATCH body (partial=True)."""


class UserSchema(ma.Schema):
    id = ma.fields.UUID()
    username = ma.fields.String()
    role = ma.fields.String()
    permissions = ma.fields.List(ma.fields.String())
    email = ma.fields.String(allow_none=True)
    is_active = ma.fields.Boolean()
    created_at = ma.fields.AwareDateTime()
    mfa_enrolled = ma.fields.Function(
        lambda user: user.totp_confirmed_at is not None, dump_only=True,
        metadata={"type": "boolean", "description": "A TOTP second factor is active "
                                                     "(DELETE /api/users/{id}/mfa resets it)"})
