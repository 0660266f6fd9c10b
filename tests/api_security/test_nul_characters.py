"""PostgreSQL cannot store NUL in text or jsonb; such input must be a clean 422 naming the field,
not a 500 from the driver."""
from __future__ import annotations

import pytest

from tests.api_management.helpers import admin_client


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/api/queues", {"name": "sales\u0000"}, "name"),
    ("/api/applications", {"name": "a\u0000b"}, "name"),
    ("callbacks", {"phone_number": "15551234567", "notes": "call\u0000back"}, "notes"),
    ("contacts", {"contacts": [{"phone_number": "123", "attributes": {"k": "\u0000"}}]},
     "contacts[0].attributes.k"),
], ids=["queue_name", "application_name", "callback_notes", "contact_attribute"])
def test_given_nul_character_in_body_when_saved_then_422_naming_the_field(api, seed, path, body, field):
    tenant, client = admin_client(api, seed)
    if path == "callbacks":
        path = f"/api/queues/{seed.queue(tenant)}/callbacks"
    if path == "contacts":
        campaign = client.post("/api/campaigns", json={"name": "k"}).get_json()["id"]
        path = f"/api/campaigns/{campaign}/contacts"

    response = client.post(path, json=body)

    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "validation_failed"
    assert field in response.get_json()["details"]


def test_given_nul_character_in_query_when_listing_then_422(api, seed):
    _tenant, client = admin_client(api, seed)

    response = client.get("/api/users", query_string={"cursor": "a\u0000"})

    assert response.status_code == 422
    assert "cursor" in response.get_json()["details"]


def test_given_nul_character_in_login_username_when_logging_in_then_422_not_500(api, seed):
    tenant = seed.tenant()

    response = api.anonymous(tenant.host).post("/auth/login",
                                              json={"username": "admin\u0000", "password": "x"})

    assert response.status_code == 422


def test_given_no_token_and_nul_body_when_calling_api_then_401_first(api, seed):
    tenant = seed.tenant()

    response = api.anonymous(tenant.host).post("/api/queues", json={"name": "\u0000"})

    assert response.status_code == 401
