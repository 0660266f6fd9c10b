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


# -- outbound gateways given as a host name -------------------------------------------------------

def test_given_an_outbound_gateway_as_a_host_name_then_sofia_and_explain_dial_the_name(api, seed):
    from app.routing.fsconfig import render_gateway
    from app.routing.loader import load_rows

    tenant = seed.tenant()
    admin = api.login(tenant)
    carrier = admin.post("/api/carriers", json={"name": "fqdn"}).get_json()
    created = admin.post(f"/api/carriers/{carrier['id']}/gateways",
                         json={"host": "SIP.Carrier-Example.com.", "port": 5080})
    assert created.status_code == 201, created.get_json()
    gw = created.get_json()
    assert (gw["host"], gw["ipv4"], gw["network"], gw["inbound"], gw["outbound"]) == \
        ("sip.carrier-example.com", None, None, False, True)
    plan = admin.post("/api/lcr", json={"name": "p"}).get_json()
    route = admin.post(f"/api/lcr/{plan['id']}/routes", json={"regex": "^49"}).get_json()
    admin.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": carrier["id"]})

    explained = admin.get("/api/lcr/explain", query_string={"number": "4915112345678"}).get_json()
    assert explained["attempts"][0]["host"] == "sip.carrier-example.com:5080"
    (row,) = [g for g in load_rows(tenant.account_id).gateways if str(g.id) == gw["id"]]
    xml = render_gateway(row)
    assert 'name="proxy" value="sip.carrier-example.com:5080"' in xml


@pytest.mark.parametrize("body, field", [
    ({"host": "sip.example.com", "inbound": True}, "host"),           # the ACL admits addresses only
    ({"host": "sip.example.com", "ipv4": "198.51.100.7"}, "host"),     # one address, not two
    ({"host": "192.0.2.10"}, "host"),                                  # an IP literal goes in ipv4
    ({"host": "-bad.example.com"}, "host"),
    ({"host": "bad_name.example.com"}, "host"),
    ({"port": 5060}, "ipv4"),                                          # neither
])
def test_given_an_unusable_host_gateway_when_creating_then_422_naming_the_field(api, seed, body, field):
    admin = api.login(seed.tenant())
    carrier = admin.post("/api/carriers", json={"name": "c"}).get_json()
    response = admin.post(f"/api/carriers/{carrier['id']}/gateways", json=body)
    assert response.status_code == 422, response.get_json()
    assert field in str(response.get_json()["details"])


def test_given_an_ip_gateway_when_patched_to_a_host_then_the_address_is_replaced(api, seed):
    admin = api.login(seed.tenant())
    carrier = admin.post("/api/carriers", json={"name": "c"}).get_json()
    gw = admin.post(f"/api/carriers/{carrier['id']}/gateways",
                    json={"ipv4": "198.51.100.8", "inbound": False}).get_json()
    patched = admin.patch(f"/api/gateways/{gw['id']}", json={"host": "trunk.example.net"})
    assert patched.status_code == 200, patched.get_json()
    assert (patched.get_json()["host"], patched.get_json()["ipv4"]) == ("trunk.example.net", None)
    back = admin.patch(f"/api/gateways/{gw['id']}", json={"ipv4": "198.51.100.9"})
    assert (back.get_json()["host"], back.get_json()["ipv4"]) == (None, "198.51.100.9")
    refused = admin.patch(f"/api/gateways/{gw['id']}", json={"host": "x.example.net", "inbound": True})
    assert refused.status_code == 422
