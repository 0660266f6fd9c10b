"""API key bodies. The secret ``key`` appears in exactly one response: the create."""
from __future__ import annotations

from datetime import datetime, timezone

import marshmallow as ma
from marshmallow import validate

from app.api.fields import UtcDateTime
from app.api.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE

SCOPE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}\Z"
MAX_SCOPES = 32


def _in_future(value: datetime) -> None:
    if value <= datetime.now(timezone.utc):
        raise ma.ValidationError("Must be in the future.")


class ApiKeyCreateSchema(ma.Schema):
    name = ma.fields.String(validate=validate.Length(min=1, max=255), allow_none=True)
    scopes = ma.fields.List(
        ma.fields.String(validate=validate.Regexp(SCOPE_PATTERN, error="Scopes are 1-64 characters: letters, digits, _ . : -")),
        load_default=list,
        validate=validate.Length(max=MAX_SCOPES),
        metadata={"description": "Free-form scope names, e.g. calls, recordings, users, queues"},
    )
    expires_at = UtcDateTime(
        allow_none=True, validate=_in_future,
        metadata={"description": "Optional; ISO 8601 with a UTC offset, in the future"},
    )


class ApiKeyListQuerySchema(ma.Schema):
    include_revoked = ma.fields.Boolean(load_default=False)
    envelope = ma.fields.Boolean(load_default=False, metadata={
        "description": "true: the API's list shape {items, next_cursor} with limit/cursor; "
                       "false (v1 default, kept for existing clients): a bare array of every key"})
    limit = ma.fields.Integer(load_default=DEFAULT_PAGE_SIZE, validate=validate.Range(min=1, max=MAX_PAGE_SIZE))
    cursor = ma.fields.String(load_default=None, validate=validate.Length(max=512))


class ApiKeySchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String(allow_none=True)
    display_prefix = ma.fields.String(metadata={"description": "First 10 characters of the key"})
    scopes = ma.fields.List(ma.fields.String())
    expires_at = ma.fields.AwareDateTime(allow_none=True)
    created_at = ma.fields.AwareDateTime()
    created_by = ma.fields.UUID(allow_none=True)
    revoked_at = ma.fields.AwareDateTime(allow_none=True)
    last_used_at = ma.fields.AwareDateTime(allow_none=True)


class ApiKeyCreatedSchema(ApiKeySchema):
    key = ma.fields.String(metadata={"description": "The full key. Shown once; store it now."})
