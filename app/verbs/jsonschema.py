"""JSON Schema (draft 2020-12) of the verb language, generated from the marshmallow schemas.

Nothing here is a hand-kept copy: every property, type, default, range, enum and pattern is
read from the same field objects that validate webhook replies, and cross-field rules come from
each schema's ``json_schema_extra`` declared beside the validator enforcing them. What JSON
Schema cannot say (serialized size of tag data / listen metadata) is left to the validator.
"""
from __future__ import annotations

import sys
from typing import Any

from marshmallow import Schema, fields, missing, validate

from app import limits
from app.verbs.fields import JsonObject
from app.verbs.registry import REGISTRY

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://saas-sbc.invalid/schemas/verb-list.json"


def _merge(target: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value
    return target


def field_schema(field: fields.Field) -> dict[str, Any]:
    out: dict[str, Any]
    if isinstance(field, fields.Nested):
        nested = field.nested
        schema = nested() if isinstance(nested, type) else nested
        out = object_schema(schema)  # type: ignore[arg-type]
    elif isinstance(field, fields.List):
        out = {"type": "array", "items": field_schema(field.inner)}
    elif isinstance(field, JsonObject):
        out = {"type": "object"}
        if field.max_keys is not None:
            out["maxProperties"] = field.max_keys
        out["propertyNames"] = {"minLength": 1, "maxLength": 64}
        if field.scalar_values:
            out["additionalProperties"] = {"type": ["string", "number", "boolean", "null"]}
    elif isinstance(field, fields.Dict):
        out = {"type": "object"}
    else:
        json_type = getattr(field, "json_type", None)
        if json_type is None:
            json_type = "string" if isinstance(field, fields.String) else None
        if json_type is None:
            raise TypeError(f"no JSON Schema mapping for {type(field).__name__}")
        out = {"type": json_type}
    pattern = getattr(field, "pattern", None)
    if pattern:
        out["pattern"] = pattern
    for validator in field.validators:
        _apply_validator(out, validator)
    default = field.load_default
    if default is not None and not callable(default) and default is not missing:
        out["default"] = default
    elif callable(default):
        out["default"] = default()
    return out


def _apply_validator(out: dict[str, Any], validator: Any) -> None:
    if isinstance(validator, validate.Range):
        if validator.min is not None:
            out["minimum" if validator.min_inclusive else "exclusiveMinimum"] = validator.min
        if validator.max is not None:
            out["maximum" if validator.max_inclusive else "exclusiveMaximum"] = validator.max
    elif isinstance(validator, validate.Length):
        is_array = out.get("type") == "array"
        if validator.min is not None:
            out["minItems" if is_array else "minLength"] = validator.min
        if validator.max is not None:
            out["maxItems" if is_array else "maxLength"] = validator.max
        if validator.equal is not None:
            out["minLength"] = out["maxLength"] = validator.equal
    elif isinstance(validator, validate.OneOf):
        out["enum"] = list(validator.choices)
    elif isinstance(validator, validate.Regexp):
        out.setdefault("pattern", validator.regex.pattern)
    else:
        raise TypeError(f"no JSON Schema mapping for validator {type(validator).__name__}")


def object_schema(schema: Schema) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in schema.fields.items():
        key = field.data_key or name
        properties[key] = field_schema(field)
        if field.required:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = required
    return _merge(out, _deepcopy(getattr(schema, "json_schema_extra", {}) or {}))


def _deepcopy(value: Any) -> Any:
    import copy

    return copy.deepcopy(value)


def verb_schema(name: str) -> dict[str, Any]:
    verb_class = REGISTRY[name]
    out = object_schema(verb_class.schema())
    out["properties"]["verb"] = {"const": name}
    out["title"] = name
    doc = sys.modules[verb_class.__module__].__doc__ or verb_class.__doc__ or ""
    if doc.strip():
        out["description"] = " ".join(doc.strip().split("\n\n")[0].split())
    return out


def verb_list_json_schema() -> dict[str, Any]:
    """The schema of a whole reply: a non-empty array whose items are each one known verb."""
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "SaaS-SBC verb list",
        "description": "Instructions returned by a call_hook_url, actionHook, redirect or "
                       "timeoutHook, or stored as an application's app_json.",
        "type": "array",
        "minItems": 1,
        "maxItems": limits.VERB_LIST_MAX_VERBS,
        "items": {"oneOf": [{"$ref": f"#/$defs/{name}"} for name in REGISTRY]},
        "$defs": {name: verb_schema(name) for name in REGISTRY},
    }
