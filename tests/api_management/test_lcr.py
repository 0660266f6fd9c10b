"""/api/lcr: plans, routes (regex compiled like the router), carrier sets, platform plans
untouchable, routing.config.changed queued, tenant isolation."""
from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from app.models import Carrier, Lcr
from tests.api_management.helpers import admin_client, assert_error, cases, insert
from tests.plugins.database import set_tenant


def _plan_with_route(admin) -> tuple[dict, dict]:
    plan = admin.post("/api/lcr", json={"name": "Default"}).get_json()
    route = admin.post(f"/api/lcr/{plan['id']}/routes", json={"regex": r"^1\d{10}$", "priority": 10})
    assert route.status_code == 201, route.get_json()
    return plan, route.get_json()


def test_given_a_plan_route_and_carriers_when_saved_then_the_set_lists_in_failover_order(api, seed, owner_engine):
    _, admin = admin_client(api, seed)
    plan, route = _plan_with_route(admin)
    assert plan["is_active"] is True and plan["priority"] == 0
    platform = Carrier(id=uuid.uuid4(), account_id=None, name=f"platform-{uuid.uuid4().hex[:6]}")
    insert(owner_engine, platform)
    own = admin.post("/api/carriers", json={"name": "own"}).get_json()
    cheap = admin.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": own["id"], "priority": 1, "workload": 20})
    shared = admin.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": str(platform.id), "priority": 1, "workload": 80})
    assert cheap.status_code == 201 and shared.status_code == 201, (cheap.get_json(), shared.get_json())
    listed = admin.get(f"/api/lcr/routes/{route['id']}/carriers").get_json()
    assert [e["carrier_id"] for e in listed] == [str(platform.id), own["id"]]  # workload descending
    assert admin.get(f"/api/lcr/{plan['id']}/routes").get_json() == [route]
    assert_error(admin.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": own["id"]}),
                 409, "duplicate_carrier")


@pytest.mark.parametrize("case", cases("lcr_routes_bad.json"))
def test_given_an_invalid_route_when_saved_then_422_with_a_stable_code(api, seed, case):
    _, admin = admin_client(api, seed)
    plan = admin.post("/api/lcr", json={"name": "P"}).get_json()
    body = assert_error(admin.post(f"/api/lcr/{plan['id']}/routes", json=case["body"]), 422, case["code"])
    if "field" in case:
        assert case["field"] in json.dumps(body["details"])


def test_given_a_route_when_patching_to_a_broken_regex_then_422_and_the_old_regex_stays(api, seed):
    _, admin = admin_client(api, seed)
    _, route = _plan_with_route(admin)
    assert_error(admin.patch(f"/api/lcr/routes/{route['id']}", json={"regex": "(("}), 422, "invalid_route_regex")
    assert admin.get(f"/api/lcr/routes/{route['id']}").get_json()["regex"] == route["regex"]
    assert admin.patch(f"/api/lcr/routes/{route['id']}", json={"priority": 3}).get_json()["priority"] == 3


def test_given_an_entry_when_patched_and_deleted_then_changes_apply_only_on_its_route(api, seed):
    _, admin = admin_client(api, seed)
    plan, route = _plan_with_route(admin)
    other_route = admin.post(f"/api/lcr/{plan['id']}/routes", json={"regex": "^44"}).get_json()
    carrier = admin.post("/api/carriers", json={"name": "c"}).get_json()
    entry = admin.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": carrier["id"]}).get_json()
    assert (entry["priority"], entry["workload"]) == (0, 100)
    assert_error(admin.patch(f"/api/lcr/routes/{other_route['id']}/carriers/{entry['id']}", json={"workload": 1}),
                 404, "lcr_carrier_set_entry_not_found")
    assert admin.patch(f"/api/lcr/routes/{route['id']}/carriers/{entry['id']}", json={"workload": 5}).get_json()["workload"] == 5
    assert admin.delete(f"/api/lcr/routes/{route['id']}/carriers/{entry['id']}").status_code == 204
    assert admin.get(f"/api/lcr/routes/{route['id']}/carriers").get_json() == []


def test_given_a_carrier_of_another_tenant_when_added_to_a_route_then_422(api, seed):
    _, admin_a = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    _, route = _plan_with_route(admin_a)
    foreign = admin_b.post("/api/carriers", json={"name": "b"}).get_json()
    assert_error(admin_a.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": foreign["id"]}),
                 422, "invalid_reference")


def test_given_a_platform_plan_when_a_tenant_reads_or_edits_it_then_404(api, seed, owner_engine):
    _, admin = admin_client(api, seed)
    platform = Lcr(id=uuid.uuid4(), account_id=None, name="platform default")
    insert(owner_engine, platform)
    for response in (admin.get(f"/api/lcr/{platform.id}"),
                     admin.patch(f"/api/lcr/{platform.id}", json={"name": "mine now"}),
                     admin.delete(f"/api/lcr/{platform.id}"),
                     admin.post(f"/api/lcr/{platform.id}/routes", json={"regex": "^1"})):
        assert_error(response, 404, "lcr_not_found")
    assert str(platform.id) not in json.dumps(admin.get("/api/lcr?limit=200").get_json())
    with owner_engine.connect() as conn:
        assert conn.execute(text("SELECT name FROM lcr WHERE id = :i"), {"i": str(platform.id)}).scalar() == "platform default"


def test_given_lcr_changes_when_committed_then_routing_config_changed_names_the_plan(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    plan, route = _plan_with_route(admin)
    admin.delete(f"/api/lcr/routes/{route['id']}")
    with owner_engine.connect() as conn:
        bodies = conn.execute(text(
            "SELECT body FROM event_outbox WHERE routing_key = 'routing.config.changed' AND body::text LIKE :p "
            "ORDER BY created_at"), {"p": f"%{plan['id']}%"}).scalars().all()
    assert len(bodies) == 3 and all("lcr" in json.dumps(b) for b in bodies)


def test_given_another_tenants_plan_route_and_entry_when_accessed_then_404(api, seed, app_role_conn):
    _, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    plan, route = _plan_with_route(admin_a)
    carrier = admin_a.post("/api/carriers", json={"name": "c"}).get_json()
    entry = admin_a.post(f"/api/lcr/routes/{route['id']}/carriers", json={"carrier_id": carrier["id"]}).get_json()
    assert_error(admin_b.get(f"/api/lcr/{plan['id']}"), 404, "lcr_not_found")
    assert_error(admin_b.get(f"/api/lcr/{plan['id']}/routes"), 404, "lcr_not_found")
    assert_error(admin_b.patch(f"/api/lcr/routes/{route['id']}", json={"priority": 1}), 404, "lcr_route_not_found")
    assert_error(admin_b.delete(f"/api/lcr/routes/{route['id']}"), 404, "lcr_route_not_found")
    assert_error(admin_b.get(f"/api/lcr/routes/{route['id']}/carriers"), 404, "lcr_route_not_found")
    assert_error(admin_b.delete(f"/api/lcr/routes/{route['id']}/carriers/{entry['id']}"), 404, "lcr_route_not_found")
    assert admin_b.get("/api/lcr").get_json()["items"] == []
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("DELETE FROM lcr_routes WHERE id = :i"), {"i": route["id"]}).rowcount == 0
