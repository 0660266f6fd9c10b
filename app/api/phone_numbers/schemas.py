"""Phone number and answering-settings bodies.

A number is created *without* answering settings (the SPEC sets the mode on a saved number
only); they live in a sub-resource, ``/api/phone-numbers/:id/answering``.
"""
from __future__ import annotations

from typing import Any

import marshmallow as ma
from marshmallow import validate

from app.api.common import ListQuerySchema
from app.models.enums import ANSWERING_MODES, HOOK_METHODS

NUMBER_PATTERN = r"^\+?[0-9]{1,20}\Z"
SEARCH_PATTERN = NUMBER_PATTERN
URL_MAX = 2048
# A short secret would be mostly disclosed by its displayed last four characters.
SIGNING_SECRET_MIN = 16


class PhoneNumberCreateSchema(ma.Schema):
    number = ma.fields.String(
        required=True,
        validate=validate.Regexp(NUMBER_PATTERN, error="Digits only, optionally with a leading +."),
        metadata={"description": "Stored digits only (a leading + is dropped)"},
    )
    application_id = ma.fields.UUID(allow_none=True)

    @ma.post_load
    def _digits(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        data["number"] = data["number"].lstrip("+")
        return data


class PhoneNumberListQuerySchema(ListQuerySchema):
    """The list's query: the page, and an optional search by part of the number (the console's
    search box): digits, a leading ``+`` ignored as it is when a number is stored."""
    number = ma.fields.String(
        load_default=None,
        validate=validate.Regexp(SEARCH_PATTERN, error="Digits only, optionally with a leading +."),
        metadata={"description": "Only numbers containing these digits (a leading + is ignored)"},
    )

    @ma.post_load
    def _digits(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data["number"] is not None:
            data["number"] = data["number"].lstrip("+")
        return data


class PhoneNumberPatchSchema(ma.Schema):
    application_id = ma.fields.UUID(allow_none=True, required=True)


class PhoneNumberSchema(ma.Schema):
    id = ma.fields.UUID()
    number = ma.fields.String()
    application_id = ma.fields.UUID(allow_none=True)
    answering_mode = ma.fields.String(allow_none=True, metadata={
        "description": "call_flow | webhook (SPEC's answering settings); null when the application "
                       "answers with a static app_json list, which is neither (see answered_by)"})
    answered_by = ma.fields.String(allow_none=True, metadata={
        "description": "What drives a call to this number now: flow | webhook | websocket | app_json "
                       "(call.started's handler), null when nothing would (the call is refused)"})
    created_at = ma.fields.AwareDateTime()


class AnsweringWriteSchema(ma.Schema):
    mode = ma.fields.String(required=True, validate=validate.OneOf(ANSWERING_MODES))
    # call_flow mode
    call_flow_sid = ma.fields.UUID(allow_none=True, metadata={
        "description": "call_flow mode: the flow; omitted = restore the flow used before webhook mode"})
    # webhook mode
    url = ma.fields.String(validate=validate.Length(min=1, max=URL_MAX),
                           metadata={"description": "webhook mode: https:// and publicly reachable"})
    method = ma.fields.String(validate=validate.OneOf(HOOK_METHODS), metadata={"description": "Default POST"})
    signing_secret = ma.fields.String(
        allow_none=True, load_only=True, validate=validate.Length(min=SIGNING_SECRET_MIN, max=255),
        metadata={"description": "Write-only; stored encrypted; omitted = keep, null = remove"},
    )
    basic_auth_username = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=255))
    basic_auth_password = ma.fields.String(allow_none=True, load_only=True,
                                           validate=validate.Length(min=1, max=255))

    @ma.validates_schema
    def _fields_match_mode(self, data: dict[str, Any], **_: Any) -> None:
        webhook_only = ("url", "method", "signing_secret", "basic_auth_username", "basic_auth_password")
        if data.get("mode") == "call_flow":
            extra = [name for name in webhook_only if name in data]
            if extra:
                raise ma.ValidationError(
                    {name: ["Only allowed with mode 'webhook'."] for name in extra})
        elif data.get("mode") == "webhook":
            if "call_flow_sid" in data:
                raise ma.ValidationError({"call_flow_sid": ["Only allowed with mode 'call_flow'."]})
            if not data.get("url"):
                raise ma.ValidationError({"url": ["Required for mode 'webhook'."]})


class WebhookSettingsSchema(ma.Schema):
    url = ma.fields.String(allow_none=True)
    method = ma.fields.String()
    signing_secret_last4 = ma.fields.String(allow_none=True)
    has_signing_secret = ma.fields.Boolean()
    basic_auth_username = ma.fields.String(allow_none=True)
    has_basic_auth_password = ma.fields.Boolean()


class AnsweringSchema(ma.Schema):
    phone_number_id = ma.fields.UUID()
    number = ma.fields.String()
    mode = ma.fields.String(allow_none=True, metadata={
        "description": "call_flow | webhook; null while a static app_json list answers (answered_by)"})
    answered_by = ma.fields.String(allow_none=True, metadata={
        "description": "flow | webhook | websocket | app_json | null: what drives a call now"})
    available_modes = ma.fields.List(ma.fields.String(), metadata={
        "description": "Modes this account may choose (webhook needs license programmable-voice)"})
    application_id = ma.fields.UUID(allow_none=True)
    call_flow_sid = ma.fields.UUID(allow_none=True)
    saved_call_flow_sid = ma.fields.UUID(allow_none=True, metadata={
        "description": "The flow restored when switching back from webhook mode"})
    webhook = ma.fields.Nested(WebhookSettingsSchema, allow_none=True)
