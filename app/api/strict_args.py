"""The request-body parser of every API operation: a JSON body is required, and JSON types are
taken as the OpenAPI document states them.

flask-smorest hands every ``@blp.arguments`` to one webargs parser. webargs read a missing body
as ``{}`` (a PATCH or ``POST /api/api-keys`` without a body went through, although each
operation's ``requestBody`` is ``required``), and marshmallow's fields convert what a form or a
query string would send: ``0``/``1``/``"yes"`` became booleans and ``2.5e-42`` the integer 0.
In a JSON body the document's ``boolean`` means ``true``/``false`` and ``integer`` a JSON
integer, so, for the ``json`` location only (query strings keep their text conversions):

* no body at all -> 400 ``body_required``;
* a ``Boolean`` field given anything but ``true``/``false``, an ``Integer`` field given anything
  but an integer (``1.0``, ``2.5e-42``, ``"5"``, ``true``), a ``Float``/``Number`` field given a
  string or a boolean -> 422 ``validation_failed``, with the field named in ``details`` like every
  other field error, nested and list items included.

Installed on flask-smorest's ``Blueprint`` by ``app/api/__init__.py`` before any route module is
imported, so every blueprint of the API uses it (``install``).
"""
from __future__ import annotations

from typing import Any, Optional

import flask_smorest
import marshmallow as ma
from webargs import core
from webargs.flaskparser import FlaskParser

from app.errors import BadRequest

JSON = "json"


class BodyRequired(BadRequest):
    code = "body_required"


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _each(field: ma.fields.Field, values: Any) -> Optional[dict[int, Any]]:
    if not isinstance(values, list):
        return None  # marshmallow reports "Not a valid list."
    found = {index: problem for index, item in enumerate(values)
             if (problem := field_type_errors(field, item)) is not None}
    return found or None


def field_type_errors(field: ma.fields.Field, value: Any) -> Any:
    """The error messages for ``value`` where its JSON type is not the field's, else None."""
    if value is None:
        return None  # allow_none is the field's own rule
    if isinstance(field, ma.fields.Boolean):
        return None if isinstance(value, bool) else [field.error_messages["invalid"]]
    if isinstance(field, ma.fields.Integer):
        return None if _is_integer(value) else [field.error_messages["invalid"]]
    if isinstance(field, ma.fields.Number):
        return None if _is_number(value) else [field.error_messages["invalid"]]
    if isinstance(field, ma.fields.Pluck):
        return None  # loads a scalar through its schema's one field
    if isinstance(field, ma.fields.Nested):
        schema = field.schema
        if field.many or schema.many:
            if not isinstance(value, list):
                return None
            found = {index: problem for index, item in enumerate(value)
                     if (problem := schema_type_errors(schema, item))}
            return found or None
        return schema_type_errors(schema, value) or None
    if isinstance(field, ma.fields.List):
        return _each(field.inner, value)
    if isinstance(field, ma.fields.Dict) and field.value_field is not None and isinstance(value, dict):
        found = {key: {"value": problem} for key, item in value.items()
                 if (problem := field_type_errors(field.value_field, item)) is not None}
        return found or None
    return None


def schema_type_errors(schema: ma.Schema, data: Any) -> dict[str, Any]:
    """Field errors (marshmallow's shape) for every value whose JSON type the schema refuses."""
    if not isinstance(data, dict):
        return {}  # marshmallow reports "Invalid input type."
    found: dict[str, Any] = {}
    for name, field in schema.load_fields.items():
        key = field.data_key if field.data_key is not None else name
        if key in data:
            problem = field_type_errors(field, data[key])
            if problem is not None:
                found[key] = problem
    return found


class StrictJsonParser(FlaskParser):
    """webargs' Flask parser with the two JSON body rules of the module docstring."""

    def load_json(self, req: Any, schema: ma.Schema) -> Any:
        data = super().load_json(req, schema)
        if data is core.missing:
            raise BodyRequired("This operation needs a JSON body (Content-Type: application/json).")
        return data

    def pre_load(self, location_data: Any, *, schema: ma.Schema, req: Any, location: str) -> Any:
        if location == JSON:
            problems = schema_type_errors(schema, location_data)
            if problems:
                raise ma.ValidationError(problems)  # webargs: 422 with details {"json": …}
        return location_data


def install() -> None:
    """Make ``StrictJsonParser`` the parser of every flask-smorest Blueprint created afterwards
    (``ARGUMENTS_PARSER`` is read when ``@blp.arguments`` decorates a view)."""
    if not isinstance(flask_smorest.Blueprint.ARGUMENTS_PARSER, StrictJsonParser):
        flask_smorest.Blueprint.ARGUMENTS_PARSER = StrictJsonParser()
