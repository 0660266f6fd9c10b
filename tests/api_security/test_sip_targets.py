"""``sip:`` dial targets bypass carriers, LCR and the gateway ACL, so they are refused by default;
an admin lists the hosts an account may reach (``/api/sip-targets``), each host must pass the
address policy when listed and again when the call dials."""
from __future__ import annotations

import pytest

from app.calls.sip_targets import normalize_host, uri_host
from tests.api_management.helpers import admin_client, assert_error

PUBLIC_IP = "93.184.215.14"


def test_given_public_hosts_when_listed_then_shown_normalized_and_duplicates_409(api, seed, media_dns):
    _tenant, client = admin_client(api, seed)

    ip = client.post("/api/sip-targets", json={"host": PUBLIC_IP})
    name = client.post("/api/sip-targets", json={"host": "PBX.Example.COM."})
    again = client.post("/api/sip-targets", json={"host": "pbx.example.com"})

    assert ip.status_code == 201 and name.status_code == 201, (ip.get_json(), name.get_json())
    assert name.get_json()["host"] == "pbx.example.com"
    assert_error(again, 409, "duplicate_sip_target")
    assert [t["host"] for t in client.get("/api/sip-targets").get_json()] == [PUBLIC_IP, "pbx.example.com"]


@pytest.mark.parametrize(("host", "code"), [
    ("10.0.0.5", "unsafe_url"), ("192.168.1.1", "unsafe_url"), ("169.254.169.254", "unsafe_url"),
    ("[fe80::1]", "unsafe_url"), ("internal.example.com", "unsafe_url"), ("metadata.google.internal", "unsafe_url"),
    ("localhost", "unsafe_url"), ("bad host!", "invalid_sip_host"), ("-x.example.com", "invalid_sip_host"),
])
def test_given_non_public_or_malformed_host_when_listed_then_422(api, seed, media_dns, host, code):
    _tenant, client = admin_client(api, seed)

    assert_error(client.post("/api/sip-targets", json={"host": host}), 422, code)
    assert client.get("/api/sip-targets").get_json() == []


def test_given_another_tenants_host_when_deleting_then_404_and_own_delete_204(api, seed):
    _a, alice = admin_client(api, seed)
    _b, bob = admin_client(api, seed)
    listed = alice.post("/api/sip-targets", json={"host": PUBLIC_IP}).get_json()

    assert_error(bob.delete(f"/api/sip-targets/{listed['id']}"), 404, "sip_target_not_found")
    assert bob.get("/api/sip-targets").get_json() == []
    assert alice.delete(f"/api/sip-targets/{listed['id']}").status_code == 204
    assert alice.get("/api/sip-targets").get_json() == []


@pytest.mark.parametrize(("uri", "host"), [
    ("sip:bob@pbx.example.com", "pbx.example.com"), ("sips:bob@PBX.example.com:5061;transport=tls", "pbx.example.com"),
    ("bob@[::1]:5080", "::1"), ("sip:bob@127.0.0.1", "127.0.0.1"), ("sip:nobody", None),
])
def test_given_sip_uri_when_reading_its_host_then_normalized(uri, host):
    assert uri_host(uri) == host
    assert normalize_host("Example.COM.") == "example.com"
