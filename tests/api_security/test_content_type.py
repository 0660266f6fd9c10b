"""A JSON body sent without ``Content-Type: application/json`` gets one clear 415, never
"Missing data for required field" on every field; bodyless requests and +json types pass."""
from __future__ import annotations

import json

import pytest

BODY = json.dumps({"name": "sales"})


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_given_a_json_body_without_the_json_content_type_when_posting_then_415_naming_it(api, seed, content_type):
    client = api.login(seed.tenant())
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.post("/api/queues", data=BODY, headers=headers)
    assert response.status_code == 415, response.get_json()
    body = response.get_json()
    assert body["code"] == "unsupported_media_type"
    assert "application/json" in body["message"]
    assert "Missing data" not in response.get_data(as_text=True)


def test_given_a_login_body_without_content_type_then_415_not_invalid_credentials(api, seed):
    tenant = seed.tenant()
    response = api.anonymous(tenant.host).post(
        "/auth/login", data=json.dumps({"username": "admin", "password": "x"}))
    assert response.status_code == 415 and response.get_json()["code"] == "unsupported_media_type"


def test_given_a_vendor_json_content_type_when_posting_then_it_is_parsed(api, seed):
    client = api.login(seed.tenant())
    response = client.post("/api/queues", data=BODY,
                           headers={"Content-Type": "application/vnd.api+json; charset=utf-8"})
    assert response.status_code == 201, response.get_json()


def test_given_no_body_and_no_content_type_when_posting_a_bodyless_endpoint_then_it_works(api, seed):
    tenant = seed.tenant()
    client = api.login(tenant)
    response = client.post("/auth/refresh")
    assert response.status_code == 200, response.get_json()
