"""SPEC: webhook URLs to private, loopback-only-in-dev or metadata addresses are refused when they
are saved. URLs inside a saved verb list (application ``app_json``) or call-flow definition were
only checked when a call used them; they are refused on save now, like ``call_hook_url``."""
from __future__ import annotations

import pytest

from tests.api_management.helpers import PUBLIC_HOOK, admin_client

PRIVATE = ["https://10.0.0.1/next", "https://169.254.169.254/latest", "https://192.168.1.1/x"]


@pytest.mark.parametrize("url", PRIVATE)
@pytest.mark.parametrize("verb", [
    lambda u: {"verb": "redirect", "url": u},
    lambda u: {"verb": "play", "url": u},
    lambda u: {"verb": "gather", "input": ["dtmf"], "actionHook": u},
], ids=["redirect", "play", "gather"])
def test_given_private_url_in_app_json_when_saved_then_422_unsafe_url(api, seed, url, verb):
    _tenant, client = admin_client(api, seed)

    response = client.post("/api/applications", json={"name": "a", "app_json": [verb(url)]})

    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "unsafe_url"


@pytest.mark.parametrize("url", PRIVATE)
def test_given_private_url_in_flow_definition_when_saved_or_patched_then_422_unsafe_url(api, seed, url):
    _tenant, client = admin_client(api, seed)
    good = {"start": "a", "nodes": {"a": {"verb": {"verb": "redirect", "url": PUBLIC_HOOK}}}}
    bad = {"start": "a", "nodes": {"a": {"verb": {"verb": "redirect", "url": url}}}}
    flow = client.post("/api/call-flows", json={"name": "ok", "definition": good})
    assert flow.status_code == 201, flow.get_json()

    created = client.post("/api/call-flows", json={"name": "f", "definition": bad})
    patched = client.patch(f"/api/call-flows/{flow.get_json()['id']}", json={"definition": bad})

    assert (created.status_code, created.get_json()["code"]) == (422, "unsafe_url")
    assert (patched.status_code, patched.get_json()["code"]) == (422, "unsafe_url")
    assert client.get(f"/api/call-flows/{flow.get_json()['id']}").get_json()["definition"] == good


@pytest.mark.parametrize("body", [
    lambda: {"name": "a", "call_hook_url": "https://hooks.example.com:0/call"},
    lambda: {"name": "a", "app_json": [{"verb": "redirect", "url": "https://hooks.example.com:0/next"}]},
], ids=["call_hook_url", "verb_url"])
def test_given_hook_url_with_port_0_when_saved_then_422_unsafe_url_invalid_port(api, seed, body):
    _tenant, client = admin_client(api, seed)

    response = client.post("/api/applications", json=body())

    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "unsafe_url"
    assert response.get_json()["details"]["reason"] == "invalid_port"
