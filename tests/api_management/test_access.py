"""Every management endpoint refuses non-admin sessions before reading the body or the id."""
from __future__ import annotations

import uuid

import pytest

from tests.api_management.helpers import assert_error, load

ENDPOINTS = load("admin_only_endpoints.json")


@pytest.mark.parametrize("method,path", ENDPOINTS, ids=[f"{m} {p}" for m, p in ENDPOINTS])
def test_given_an_agent_or_supervisor_session_when_calling_a_management_endpoint_then_403_admin_required(
        api, seed, method, path):
    tenant = seed.tenant()
    seed.user(tenant, "sup", role="supervisor", permissions=["recordings.view", "api_keys.create", "api_keys.delete"])
    client = api.login(tenant, "sup")
    url = path.replace("{id}", str(uuid.uuid4()))
    response = client.request(method, url, json={} if method in ("POST", "PATCH", "PUT") else None)
    assert_error(response, 403, "admin_required")


def test_given_an_admin_exchanged_into_an_agent_session_when_managing_then_403_admin_required(api, seed):
    tenant = seed.tenant()
    token = api.mint(tenant, "admin", session="agent")
    client = api.anonymous(tenant.host).with_token(token)
    assert_error(client.get("/api/applications"), 403, "admin_required")
