"""A JSON body is taken as the OpenAPI document states it (app/api/strict_args.py): every
operation's requestBody is required, a ``boolean`` is ``true``/``false`` and an ``integer`` a
JSON integer. A PATCH or ``POST /api/api-keys`` without a body, ``0`` as a boolean and
``2.5e-42`` as an integer used to be accepted (read as ``{}``, ``False`` and ``0``)."""
from __future__ import annotations

import marshmallow as ma
import pytest

from app.api.strict_args import schema_type_errors
from tests.api_management.helpers import admin_client, assert_error

JSON = "application/json"


@pytest.mark.parametrize("content_type", [None, JSON], ids=["no_content_type", "json_content_type"])
def test_given_no_body_when_patching_or_creating_an_api_key_then_400_body_required(api, seed, content_type):
    tenant, client = admin_client(api, seed)
    user_id = tenant.admin.id
    plan = client.post("/api/lcr", json={"name": "plan"}).get_json()["id"]
    headers = {"Content-Type": content_type} if content_type else {}

    for method, path in (("PATCH", f"/api/users/{user_id}"), ("PATCH", f"/api/lcr/{plan}"),
                         ("POST", "/api/api-keys")):
        response = client.request(method, path, headers=headers)
        assert_error(response, 400, "body_required")
    assert client.get("/api/api-keys").get_json() == []


def test_given_no_body_when_logging_in_then_400_body_required(api, seed):
    tenant = seed.tenant()

    assert_error(api.anonymous(tenant.host).post("/auth/login"), 400, "body_required")


@pytest.mark.parametrize("value", [0, 1, "true", "false", "yes", ""], ids=repr)
def test_given_a_non_boolean_for_a_boolean_field_when_saved_then_422_naming_the_field(api, seed, value):
    _tenant, client = admin_client(api, seed)

    created = client.post("/api/lcr", json={"name": "plan", "is_active": value})

    body = assert_error(created, 422, "validation_failed")
    assert body["details"] == {"json": {"is_active": ["Not a valid boolean."]}}
    assert client.get("/api/lcr").get_json()["items"] == []


@pytest.mark.parametrize("value", [2.5e-42, 1.0, 3.7, "5", True], ids=repr)
def test_given_a_non_integer_for_an_integer_field_when_saved_then_422_naming_the_field(api, seed, value):
    _tenant, client = admin_client(api, seed)

    created = client.post("/api/lcr", json={"name": "plan", "priority": value})

    body = assert_error(created, 422, "validation_failed")
    assert body["details"] == {"json": {"priority": ["Not a valid integer."]}}


def test_given_json_booleans_and_integers_when_saved_then_accepted(api, seed):
    _tenant, client = admin_client(api, seed)

    created = client.post("/api/lcr", json={"name": "plan", "is_active": False, "priority": 7})

    assert created.status_code == 201, created.get_json()
    assert (created.get_json()["is_active"], created.get_json()["priority"]) == (False, 7)


def test_given_nested_and_listed_fields_when_checked_then_each_wrong_type_is_named_where_it_is():
    class Item(ma.Schema):
        enabled = ma.fields.Boolean()
        weight = ma.fields.Float()

    class Body(ma.Schema):
        count = ma.fields.Integer(data_key="n")
        items = ma.fields.List(ma.fields.Nested(Item))
        one = ma.fields.Nested(Item)
        tiers = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer())
        anything = ma.fields.Raw()

    found = schema_type_errors(Body(), {
        "n": 1.5, "items": [{"enabled": True, "weight": 2}, {"enabled": 0, "weight": "2"}],
        "one": {"enabled": None}, "tiers": {"a": 1, "b": 0.5}, "anything": 0})

    assert found == {"n": ["Not a valid integer."],
                     "items": {1: {"enabled": ["Not a valid boolean."], "weight": ["Not a valid number."]}},
                     "tiers": {"b": {"value": ["Not a valid integer."]}}}
