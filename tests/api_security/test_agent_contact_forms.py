"""An agent's ``contact`` takes exactly the forms docs/api.md promises (app/contact/endpoints.py),
each validated when saved and turned into the ``dial`` target that rings the agent: a contact
the API accepts is always one the dial verb accepts, and ``user/`` never names another domain."""
from __future__ import annotations

import pytest

from app.calls.originate import agent_connect_verbs
from app.verbs import parse_verb_list
from tests.api_management.helpers import admin_client

ACCEPTED = {
    "user/1001": {"type": "user", "name": "1001"},
    "sip:1001@pbx.example.com": {"type": "sip", "name": "sip:1001@pbx.example.com"},
    "sips:agent.7@pbx.example.com:5061": {"type": "sip", "name": "sips:agent.7@pbx.example.com:5061"},
    "sofia/internal/1001@10.0.0.5:5060;transport=tcp": {"type": "sip", "name": "sip:1001@10.0.0.5:5060;transport=tcp"},
}


@pytest.mark.parametrize("contact", sorted(ACCEPTED))
def test_given_a_promised_contact_form_when_saved_then_stored_and_dialled_as_its_target(api, seed, contact):
    tenant, client = admin_client(api, seed)

    response = client.post("/api/agents", json={"user_id": str(seed.user(tenant, "ann").id), "contact": contact})

    assert response.status_code == 201, response.get_json()
    verbs = agent_connect_verbs(contact)
    assert verbs == [{"verb": "dial", "target": [ACCEPTED[contact]]}]
    assert len(parse_verb_list(verbs)) == 1  # the dial verb takes it as it is


@pytest.mark.parametrize("contact", [
    "user/1001@othertenant",            # a user of another directory domain
    "sofia/external/1001@carrier",      # the trunk profile
    "sofia/gateway/gw/15551230000",     # a carrier gateway
    "sofia/internal/sip:1001@host",
    "1001", "sip:nohost", "loopback/1001", "user/",
])
def test_given_a_contact_of_no_promised_form_when_saved_then_422_naming_the_forms(api, seed, contact):
    tenant, client = admin_client(api, seed)

    response = client.post("/api/agents", json={"user_id": str(seed.user(tenant, "ann").id), "contact": contact})

    assert response.status_code == 422, response.get_json()
    assert "user/1001" in str(response.get_json()["details"])
    assert agent_connect_verbs(contact) == []  # a stored legacy value dials nothing
