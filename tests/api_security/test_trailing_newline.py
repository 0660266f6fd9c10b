"""Python's ``$`` also matches before a final newline, so ``^...$`` patterns let ``"9\\n"`` through:
a tech prefix or phone number with a line break would reach dial strings (ESL commands are
newline-framed) and a username ``"admin\\n"`` would look like ``admin``. Every pattern ends in ``\\Z``."""
from __future__ import annotations

import pytest

from app.api.tenancy import tenant_from_host
from tests.api_management.helpers import admin_client


def _campaign(client) -> str:
    return client.post("/api/campaigns", json={"name": "spring"}).get_json()["id"]


CASES = [
    pytest.param("/api/users", {"username": "admin\n", "password": "x" * 12}, id="username"),
    pytest.param("/api/carriers", {"name": "c", "tech_prefix": "9\n"}, id="tech_prefix"),
    pytest.param("/api/phone-numbers", {"number": "15551234567\n"}, id="phone_number"),
    pytest.param("/api/api-keys", {"scopes": ["calls\n"]}, id="api_key_scope"),
    pytest.param("/api/applications", {"name": "a", "language": "en\n"}, id="language"),
    pytest.param("/api/campaigns", {"name": "k", "caller_id": "15551234567\n"}, id="campaign_caller_id"),
    pytest.param("contacts", {"contacts": [{"phone_number": "15551234567\n"}]}, id="campaign_contact"),
]


@pytest.mark.parametrize(("path", "body"), CASES)
def test_given_value_with_trailing_newline_when_saved_then_422_and_nothing_stored(api, seed, path, body):
    _tenant, client = admin_client(api, seed)
    if path == "contacts":
        path = f"/api/campaigns/{_campaign(client)}/contacts"

    response = client.post(path, json=body)

    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "validation_failed"


def test_given_host_label_with_newline_when_tenant_resolved_then_no_tenant():
    assert tenant_from_host("acme\n.localhost", "localhost") is None
    assert tenant_from_host("acme.localhost", "localhost") == "acme"
