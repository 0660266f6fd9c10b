"""Carrier fields do what they say: ``e164_leading_plus`` puts "+" before the number on the
dial string, ``tech_prefix: ""`` (or null) means no prefix — through the API, the loader,
the compiled LCR table and the explain/bridge it produces."""
from __future__ import annotations

import uuid

import pytest

from app.routing.lcr import dial_prefix
from app.routing.rows import CarrierRow


@pytest.mark.parametrize("tech_prefix, plus, expected", [
    ("", False, ""), (None, False, ""), ("", True, "+"), ("99#", False, "99#"), ("99#", True, "99#+"),
])
def test_given_carrier_fields_when_building_the_dial_prefix_then_prefix_then_plus(tech_prefix, plus, expected):
    carrier = CarrierRow(uuid.uuid4(), "c", tech_prefix=tech_prefix, e164_leading_plus=plus)
    assert dial_prefix(carrier) == expected


def _routed_carrier(admin, body: dict, ip: str) -> dict:
    carrier = admin.post("/api/carriers", json={"name": f"c-{uuid.uuid4().hex[:6]}", **body})
    assert carrier.status_code == 201, carrier.get_json()
    carrier = carrier.get_json()
    gw = admin.post(f"/api/carriers/{carrier['id']}/gateways",
                    json={"ipv4": ip, "inbound": False, "outbound": True})
    assert gw.status_code == 201, gw.get_json()
    plan = admin.post("/api/lcr", json={"name": f"p-{uuid.uuid4().hex[:6]}"}).get_json()
    route = admin.post(f"/api/lcr/{plan['id']}/routes", json={"regex": "^49"}).get_json()
    entry = admin.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": carrier["id"]})
    assert entry.status_code == 201, entry.get_json()
    return carrier


@pytest.mark.parametrize("body, number_part", [
    ({"tech_prefix": "", "e164_leading_plus": True}, "+4915112345678"),
    ({"tech_prefix": "", "e164_leading_plus": False}, "4915112345678"),
    ({"tech_prefix": "77#", "e164_leading_plus": True}, "77#+4915112345678"),
])
def test_given_a_carrier_made_through_the_api_when_explaining_then_the_endpoint_dials_what_the_fields_say(
        api, seed, body, number_part):
    admin = api.login(seed.tenant())
    carrier = _routed_carrier(admin, body, "198.51.100.77")
    if body["tech_prefix"] == "":
        assert carrier["tech_prefix"] is None  # "" is stored as "no prefix"
    explained = admin.get("/api/lcr/explain", query_string={"number": "+4915112345678"}).get_json()
    assert explained["attempts"], explained
    assert explained["attempts"][0]["endpoint"].endswith("/" + number_part)
    assert explained["bridge"].endswith("/" + number_part)
