"""An agent's contact is dialled as a FreeSWITCH endpoint. Dial-string syntax in it would let a
tenant admin set channel variables such as ``api_on_answer`` (API commands on the switch) or add
legs, so the contact is an endpoint and nothing more."""
from __future__ import annotations

import pytest

from tests.api_management.helpers import admin_client


@pytest.mark.parametrize("contact", [
    "{api_on_answer=system id}user/1001",
    "[execute_on_answer=hangup]user/1001",
    "<api_on_answer=system id>user/1001",
    "user/1001,sofia/external/19005550100@carrier",
    "user/1001|user/1002",
    "user/1001:_:user/1002",
    "user/1001 extra",
    "user/1001\n",
])
def test_given_contact_with_dial_string_syntax_when_agent_saved_then_422(api, seed, contact):
    tenant, client = admin_client(api, seed)
    user = seed.user(tenant, "ann")
    agent = client.post("/api/agents", json={"user_id": str(user.id)}).get_json()

    created = client.post("/api/agents", json={"user_id": str(seed.user(tenant, "bo").id), "contact": contact})
    patched = client.patch(f"/api/agents/{agent['id']}", json={"contact": contact})

    assert created.status_code == 422, created.get_json()
    assert patched.status_code == 422, patched.get_json()
    assert client.get(f"/api/agents/{agent['id']}").get_json()["contact"] is None


@pytest.mark.parametrize("contact", ["user/1001", "sofia/internal/1001@10.0.0.5:5060;transport=tcp"])
def test_given_plain_endpoint_contact_when_agent_saved_then_stored(api, seed, contact):
    tenant, client = admin_client(api, seed)

    response = client.post("/api/agents", json={"user_id": str(seed.user(tenant, "ann").id), "contact": contact})

    assert response.status_code == 201, response.get_json()
    assert response.get_json()["contact"] == contact
