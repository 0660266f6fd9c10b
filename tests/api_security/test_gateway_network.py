"""A tenant's inbound gateway 0.0.0.0/0 would claim trunk traffic from the whole internet; the ACL
builder skips anything wider than /8, so the API must refuse it on save instead of answering 201
for a gateway that silently never works."""
from __future__ import annotations

import pytest

from tests.api_management.helpers import admin_client


@pytest.mark.parametrize(("ipv4", "netmask"), [("0.0.0.0", 0), ("0.0.0.0", 1), ("8.0.0.0", 7)])
def test_given_inbound_network_wider_than_slash_8_when_created_then_422(api, seed, ipv4, netmask):
    _tenant, client = admin_client(api, seed)
    carrier = client.post("/api/carriers", json={"name": "wide"}).get_json()["id"]

    response = client.post(f"/api/carriers/{carrier}/gateways",
                           json={"ipv4": ipv4, "netmask": netmask, "outbound": False})

    assert response.status_code == 422, response.get_json()
    assert "netmask" in response.get_json()["details"]
    assert client.get(f"/api/carriers/{carrier}/gateways").get_json() == []


def test_given_inbound_gateway_when_patched_to_slash_0_then_422_and_unchanged(api, seed):
    _tenant, client = admin_client(api, seed)
    carrier = client.post("/api/carriers", json={"name": "wide"}).get_json()["id"]
    gateway = client.post(f"/api/carriers/{carrier}/gateways",
                          json={"ipv4": "10.0.0.0", "netmask": 8, "outbound": False}).get_json()

    response = client.patch(f"/api/gateways/{gateway['id']}", json={"ipv4": "0.0.0.0", "netmask": 0})

    assert response.status_code == 422, response.get_json()
    assert client.get(f"/api/gateways/{gateway['id']}").get_json()["network"] == "10.0.0.0/8"
