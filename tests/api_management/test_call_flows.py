"""/api/call-flows: graph validation on save, in-use protection, isolation."""
from __future__ import annotations

import json

import pytest

from tests.api_management.helpers import PUBLIC_HOOK, admin_client, assert_error, cases, load
from tests.plugins.database import unique_number

GOOD = load("call_flows_good.json")


@pytest.mark.parametrize("case", cases("call_flows_good.json"))
def test_given_a_valid_flow_when_saved_then_201_and_it_reads_back(api, seed, case):
    _, admin = admin_client(api, seed)
    created = admin.post("/api/call-flows", json=case["body"])
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert body["definition"] == case["body"]["definition"]
    assert admin.get(f"/api/call-flows/{body['id']}").get_json() == body


@pytest.mark.parametrize("case", cases("call_flows_bad.json"))
def test_given_an_invalid_flow_when_saved_then_422_names_the_problem(api, seed, case):
    _, admin = admin_client(api, seed)
    body = assert_error(admin.post("/api/call-flows", json=case["body"]), 422, case["code"])
    assert case["field"] in json.dumps(body["details"])


def test_given_a_flow_when_patching_with_a_broken_graph_then_422_and_the_old_graph_stays(api, seed):
    _, admin = admin_client(api, seed)
    flow = admin.post("/api/call-flows", json=GOOD[1]["body"]).get_json()
    broken = {"start": "x", "nodes": {"x": {"verb": {"verb": "say"}}}}
    assert_error(admin.patch(f"/api/call-flows/{flow['id']}", json={"definition": broken}), 422, "flow_invalid")
    renamed = admin.patch(f"/api/call-flows/{flow['id']}", json={"name": "New"}).get_json()
    assert renamed["name"] == "New" and renamed["definition"] == GOOD[1]["body"]["definition"]


def test_given_a_flow_used_by_an_application_or_saved_on_a_number_when_deleting_then_409(api, seed):
    _, admin = admin_client(api, seed)
    flow = admin.post("/api/call-flows", json=GOOD[1]["body"]).get_json()
    app = admin.post("/api/applications", json={"name": "a", "call_flow_sid": flow["id"]}).get_json()
    assert_error(admin.delete(f"/api/call-flows/{flow['id']}"), 409, "call_flow_in_use")
    num = admin.post("/api/phone-numbers", json={"number": unique_number(), "application_id": app["id"]}).get_json()
    admin.put(f"/api/phone-numbers/{num['id']}/answering", json={"mode": "webhook", "url": PUBLIC_HOOK})
    # the application no longer uses it, but the number remembers it to switch back
    assert_error(admin.delete(f"/api/call-flows/{flow['id']}"), 409, "call_flow_in_use")
    admin.put(f"/api/phone-numbers/{num['id']}/answering", json={"mode": "call_flow", "call_flow_sid": None})
    admin.patch(f"/api/applications/{app['id']}", json={"call_flow_sid": None})
    assert admin.delete(f"/api/call-flows/{flow['id']}").status_code == 204


def test_given_another_tenants_flow_when_reading_changing_or_deleting_then_404(api, seed):
    _, admin_a = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    flow = admin_a.post("/api/call-flows", json=GOOD[1]["body"]).get_json()
    for response in (admin_b.get(f"/api/call-flows/{flow['id']}"),
                     admin_b.patch(f"/api/call-flows/{flow['id']}", json={"name": "x"}),
                     admin_b.delete(f"/api/call-flows/{flow['id']}")):
        assert_error(response, 404, "call_flow_not_found")
    assert admin_b.get("/api/call-flows").get_json()["items"] == []
