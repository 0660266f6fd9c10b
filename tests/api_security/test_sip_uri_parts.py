"""A ``sip:`` target is parsed once (app.calls.sip_targets.parse_sip_uri) and the dial string is
built from its checked parts: the host on the account's list is the host the INVITE goes to.
Before, only the host after the last ``@`` was checked and the text went to mod_sofia as it was:
``;fs_path=`` (the outbound proxy), ``maddr`` and ``?headers`` sent the INVITE elsewhere
(issue 28, item 1). Fixtures: tests/fixtures/sip_uris/."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.calls.sip_targets import SIP_PATTERN, InvalidSipUri, parse_sip_uri
from tests.api_management.helpers import admin_client

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sip_uris"
ACCEPTED = json.loads((FIXTURES / "accepted.json").read_text())["cases"]
REFUSED = json.loads((FIXTURES / "refused.json").read_text())["cases"]
# what a JSON-schema pattern cannot say (number ranges): only the parser refuses these
PATTERN_BLIND = ("IPv4", "port")


def _ids(cases: list[dict]) -> list[str]:
    return [c["uri"] for c in cases]


@pytest.mark.parametrize("case", ACCEPTED, ids=_ids(ACCEPTED))
def test_given_an_admitted_uri_when_parsed_then_the_dial_string_is_made_of_its_checked_parts(case):
    uri = parse_sip_uri(case["uri"])

    assert uri.host == case["host"]
    assert uri.dial_string() == case["dial"]
    assert re.fullmatch(SIP_PATTERN, case["uri"])  # the OpenAPI pattern admits it too


@pytest.mark.parametrize("case", REFUSED, ids=_ids(REFUSED))
def test_given_a_uri_with_parameters_headers_or_junk_when_parsed_then_refused_naming_the_part(case):
    with pytest.raises(InvalidSipUri) as refused:
        parse_sip_uri(case["uri"])

    assert case["names"] in str(refused.value)
    if case["names"] not in PATTERN_BLIND:
        assert not re.fullmatch(SIP_PATTERN, case["uri"])  # the published pattern refuses it too


@pytest.mark.parametrize("case", REFUSED, ids=_ids(REFUSED))
def test_given_a_refused_uri_in_a_dial_target_when_the_application_is_saved_then_422_naming_the_part(
        api, seed, case):
    _tenant, client = admin_client(api, seed)
    verbs = [{"verb": "dial", "target": [{"type": "sip", "name": case["uri"]}]}]

    response = client.post("/api/applications", json={"name": "pbx", "app_json": verbs})

    assert response.status_code == 422, response.get_json()
    body = response.get_json()
    assert body["code"] == "verb_list_rejected"
    (error,) = body["details"]
    assert error["field"] == "target.0.name" and case["names"] in error["message"], error
    assert client.get("/api/applications").get_json()["items"] == []


@pytest.mark.parametrize(("contact", "part"), [
    ("sip:100@pbx.example.com;fs_path=10.0.0.1", "fs_path"),
    ("sip:a;fs_path=sip%3A10.0.0.1;x=y@pbx.example.com", "fs_path"),
    ("sip:100@pbx.example.com;maddr=10.0.0.1", "maddr"),
    ("sip:100@pbx.example.com?Route=x", "headers"),
    ("sofia/internal/100@pbx.example.com;fs_path=10.0.0.1", "fs_path"),
    ("sofia/internal/100@pbx.example.com;maddr=10.0.0.1", "maddr"),
])
def test_given_an_agent_contact_with_a_refused_uri_part_when_saved_then_422_naming_it(api, seed, contact, part):
    tenant, client = admin_client(api, seed)
    agent = client.post("/api/agents", json={"user_id": str(seed.user(tenant, "ann").id)}).get_json()

    created = client.post("/api/agents", json={"user_id": str(seed.user(tenant, "bo").id), "contact": contact})
    patched = client.patch(f"/api/agents/{agent['id']}", json={"contact": contact})

    for response in (created, patched):
        assert response.status_code == 422 and response.get_json()["code"] == "validation_failed"
        assert part in str(response.get_json()["details"]["json"]["contact"]), response.get_json()
    assert client.get(f"/api/agents/{agent['id']}").get_json()["contact"] is None


def test_given_a_contact_with_transport_when_saved_then_dialled_from_its_parts(api, seed):
    from app.calls.originate import agent_connect_verbs

    tenant, client = admin_client(api, seed)
    contact = "sip:100@PBX.example.com:5080;transport=tcp"

    response = client.post("/api/agents", json={"user_id": str(seed.user(tenant, "ann").id), "contact": contact})

    assert response.status_code == 201, response.get_json()
    (dial,) = agent_connect_verbs(contact)
    assert parse_sip_uri(dial["target"][0]["name"]).dial_string() == "100@pbx.example.com:5080;transport=tcp"
