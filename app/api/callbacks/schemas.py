"""Callback bodies. ``status`` and ``attempts`` are the dispatcher's to change, so read-only here."""
from __future__ import annotations

import marshmallow as ma
from marshmallow import validate

from app import limits
from app.api.fields import UtcDateTime
from app.api.pagination import MAX_PAGE_SIZE
from app.models.enums import CALLBACK_STATUSES

PRIORITY_RANGE = validate.Range(min=-1000, max=1000)
MAX_PAGE = 500
# PostgreSQL's OFFSET is a bigint and costs O(offset): deeper than this is not a real page
MAX_OFFSET = 1_000_000


class PhoneNumberField(ma.fields.String):
    """Digits only, as the call records store numbers; a leading '+' is accepted and dropped."""

    def _deserialize(self, value, attr, data, **kwargs):  # noqa: ANN001
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        digits = text[1:] if text.startswith("+") else text
        if not digits.isascii() or not digits.isdigit() or not 1 <= len(digits) <= 32:
            raise ma.ValidationError("Must be 1-32 digits, optionally after a leading '+'.")
        return digits


class CallbackCreateSchema(ma.Schema):
    phone_number = PhoneNumberField(required=True)
    priority = ma.fields.Integer(
        load_default=0, validate=PRIORITY_RANGE, strict=True,
        metadata={"description": "Higher is dialled first (-1000..1000)"},
    )
    requested_at = UtcDateTime(
        metadata={"description": "When the customer asked; default now. Earlier is dialled first "
                                 "among equal priorities."},
    )
    notes = ma.fields.String(validate=validate.Length(max=2000), allow_none=True)
    scheduled_at = UtcDateTime(allow_none=True, metadata={
        "description": "Not dialled before this instant; null or absent: as soon as an agent is free"})


class CallbackRescheduleSchema(ma.Schema):
    """PATCH body: when to dial a pending callback, and its place in the line. At least one field."""

    scheduled_at = UtcDateTime(allow_none=True, metadata={
        "description": "Not dialled before this instant; null: as soon as an agent is free"})
    priority = ma.fields.Integer(validate=PRIORITY_RANGE, strict=True,
                                 metadata={"description": "Higher is dialled first (-1000..1000)"})

    @ma.validates_schema
    def _something(self, data: dict, **_: object) -> None:
        if not data:
            raise ma.ValidationError("Give scheduled_at, priority or both.", "_schema")


class CallbackListQuerySchema(ma.Schema):
    status = ma.fields.String(validate=validate.OneOf(CALLBACK_STATUSES))
    limit = ma.fields.Integer(load_default=100, validate=validate.Range(min=1, max=MAX_PAGE))
    offset = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET))
    envelope = ma.fields.Boolean(load_default=False, metadata={
        "description": "true: the API's list shape {items, next_cursor} with limit (1-200) and "
                       "cursor, offset refused; false (v1 default, kept for existing clients): a bare "
                       "array with limit/offset"})
    cursor = ma.fields.String(load_default=None, validate=validate.Length(max=512))

    @ma.validates_schema
    def _one_paging_style(self, data: dict, **_: object) -> None:
        if data.get("envelope"):
            if data.get("offset"):
                raise ma.ValidationError({"offset": ["Use cursor with envelope=true."]})
            if data.get("limit", 0) > MAX_PAGE_SIZE:
                raise ma.ValidationError({"limit": [f"At most {MAX_PAGE_SIZE} with envelope=true."]})
        elif data.get("cursor"):
            raise ma.ValidationError({"cursor": ["cursor needs envelope=true."]})


class CallbackSchema(ma.Schema):
    id = ma.fields.UUID()
    queue_id = ma.fields.UUID()
    phone_number = ma.fields.String()
    priority = ma.fields.Integer()
    requested_at = ma.fields.AwareDateTime()
    status = ma.fields.String(metadata={"description": " | ".join(CALLBACK_STATUSES)})
    attempts = ma.fields.Integer()
    max_attempts = ma.fields.Function(lambda _row: limits.CALLBACK_MAX_ATTEMPTS)
    last_attempt_at = ma.fields.AwareDateTime(allow_none=True)
    scheduled_at = ma.fields.AwareDateTime(allow_none=True, metadata={
        "description": "Not dialled before this instant; null: as soon as an agent is free"})
    notes = ma.fields.String(allow_none=True)
    created_by = ma.fields.UUID(allow_none=True)
    created_at = ma.fields.AwareDateTime()


class CallbacksCancelledSchema(ma.Schema):
    cancelled = ma.fields.Integer(metadata={"description": "How many pending callbacks were cancelled"})
