"""Strict JSON field types for verb schemas.

marshmallow's stock fields coerce (``"5"`` → 5, ``1`` → True); a webhook reply is JSON, so a
wrong type is a customer bug we report instead of guessing. Each field also states the JSON
Schema it corresponds to (``json_schema``), which the schema exporter reads, so the exported
schema and the validator cannot drift apart.
"""
from __future__ import annotations

import json
import re
from typing import Any

from marshmallow import ValidationError, fields, validate

from app import limits


class StrictInteger(fields.Integer):
    json_type = "integer"
    default_error_messages = {"invalid": "Must be an integer."}

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid")
        if isinstance(value, float):
            if not value.is_integer():
                raise self.make_error("invalid")
            value = int(value)
        return value


class StrictNumber(fields.Float):
    json_type = "number"
    default_error_messages = {"invalid": "Must be a number."}

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid")
        if value != value or value in (float("inf"), float("-inf")):
            raise self.make_error("invalid")
        return value


class StrictBoolean(fields.Boolean):
    json_type = "boolean"
    default_error_messages = {"invalid": "Must be true or false."}

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class WholeRegexp(validate.Regexp):
    """The whole value must match: with ``re.match`` a final ``$`` also accepts a trailing
    newline, and a newline in a dial target or URL would end the ESL command line it goes into.
    (Still a ``validate.Regexp``: the JSON Schema exporter publishes the pattern unchanged.)"""

    def __call__(self, value: Any) -> Any:
        if self.regex.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


class Text(fields.String):
    """A string with an optional pattern (kept as data so the exporter can publish it)."""

    json_type = "string"

    def __init__(self, *, pattern: str | None = None, pattern_message: str | None = None,
                 min_length: int | None = None, max_length: int | None = None,
                 **kwargs: Any) -> None:
        given = kwargs.pop("validate", None)
        validators = list(given) if isinstance(given, (list, tuple)) else ([given] if given else [])
        if min_length is not None or max_length is not None:
            validators.append(validate.Length(min=min_length, max=max_length))
        if pattern is not None:
            validators.append(WholeRegexp(pattern, error=pattern_message or
                                              f"Does not match {pattern}."))
        super().__init__(validate=validators, **kwargs)
        self.pattern = pattern


# https only, and none of the characters FreeSWITCH treats specially in an application argument
# (space, quote, backslash, braces, pipe, caret): the URL goes into playback/http_cache args.
_URL_PATH = r"(/[^\s'" + '"' + r"\\{}|^`<>]*)?$"
HTTPS_URL_PATTERN = r"^https://[A-Za-z0-9.\-\[\]:]+" + _URL_PATH
HOOK_URL_PATTERN = HTTPS_URL_PATTERN
WS_URL_PATTERN = r"^wss?://[A-Za-z0-9.\-\[\]:]+" + _URL_PATH
_LOOPBACK_HOOK = re.compile(r"^http://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?" + _URL_PATH)


def https_url(**kwargs: Any) -> Text:
    return Text(pattern=HTTPS_URL_PATTERN, pattern_message="Must be an https:// URL.",
                max_length=limits.VERB_URL_MAX_LENGTH, **kwargs)


class HookUrl(Text):
    """actionHook / redirect / timeoutHook / statusHook URL.

    https:// only, like the number's webhook URL (SPEC "Phone number answering settings").
    With SBC_ALLOW_LOOPBACK_WEBHOOKS=1 (development, tests) a plain-http loopback URL is also
    accepted; the exported JSON Schema documents the production rule only. The SSRF check on
    the resolved address happens at call time in the webhook client.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=limits.VERB_URL_MAX_LENGTH, **kwargs)
        self.pattern = HOOK_URL_PATTERN

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if re.fullmatch(HOOK_URL_PATTERN, text):
            return text
        from app.settings import get_settings

        if get_settings().allow_loopback_webhooks and _LOOPBACK_HOOK.fullmatch(text):
            return text
        raise ValidationError("Must be an https:// URL.")


class JsonObject(fields.Dict):
    """A small JSON object (tag data, listen metadata), bounded in keys and serialized size."""

    json_type = "object"

    def __init__(self, *, max_keys: int | None = None, scalar_values: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(keys=fields.String(), values=fields.Raw(allow_none=True), **kwargs)
        self.max_keys = max_keys
        self.scalar_values = scalar_values

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> dict:
        if not isinstance(value, dict):
            raise ValidationError("Must be a JSON object.")
        if self.max_keys is not None and len(value) > self.max_keys:
            raise ValidationError(f"At most {self.max_keys} keys.")
        for key, item in value.items():
            if not key or len(key) > 64:
                raise ValidationError("Keys must be 1 to 64 characters.")
            if self.scalar_values and not (item is None or isinstance(item, (str, int, float, bool))):
                raise ValidationError(f"Value of {key!r} must be a string, number, boolean or null.")
        if len(json.dumps(value, separators=(",", ":"))) > limits.VERB_JSON_OBJECT_MAX_CHARS:
            raise ValidationError(f"Larger than {limits.VERB_JSON_OBJECT_MAX_CHARS} characters as JSON.")
        return super()._deserialize(value, attr, data, **kwargs)
