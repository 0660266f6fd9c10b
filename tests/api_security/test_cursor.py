"""A cursor is client input: a well-formed base64 JSON list with values of the wrong type must be
a 400 ``invalid_cursor``, never a 500."""
from __future__ import annotations

import base64
import json

import pytest

from tests.api_management.helpers import admin_client


def _cursor(values) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


@pytest.mark.parametrize("values", [["admin", 1], ["admin", [1]], ["admin", {"a": 1}], [1, 2]],
                         ids=["int_for_uuid", "list_for_uuid", "object_for_uuid", "int_for_name"])
def test_given_cursor_with_wrong_value_types_when_listing_then_400_invalid_cursor(api, seed, values):
    _tenant, client = admin_client(api, seed)

    response = client.get("/api/users", query_string={"cursor": _cursor(values)})

    assert response.status_code == 400, response.get_json()
    assert response.get_json()["code"] == "invalid_cursor"


@pytest.mark.parametrize("path", ["sip-targets", "lcr-routes", "gateways"])
def test_given_a_cursor_on_a_plain_array_list_when_listing_then_400_invalid_cursor(api, seed, path):
    """These lists are never paged; a cursor used to be ignored (page one answered as page n)."""
    _tenant, client = admin_client(api, seed)
    if path == "lcr-routes":
        path = f"lcr/{client.post('/api/lcr', json={'name': 'plan'}).get_json()['id']}/routes"
    elif path == "gateways":
        carrier = client.post("/api/carriers", json={"name": "c"})
        assert carrier.status_code == 201, carrier.get_json()
        path = f"carriers/{carrier.get_json()['id']}/gateways"

    whole = client.get(f"/api/{path}")
    refused = client.get(f"/api/{path}", query_string={"cursor": _cursor(["x", 1])})

    assert whole.status_code == 200 and isinstance(whole.get_json(), list)
    assert refused.status_code == 400, refused.get_json()
    assert refused.get_json()["code"] == "invalid_cursor"
