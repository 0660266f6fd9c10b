"""/api/queues, /api/users, /api/agents."""
from __future__ import annotations

import json

import bcrypt
import pytest
from sqlalchemy import text

from tests.api_management.helpers import PUBLIC_HOOK, admin_client, assert_error, cases
from tests.plugins.database import set_tenant

# --- queues ----------------------------------------------------------------------------------

def test_given_a_queue_when_created_then_defaults_apply_and_it_reads_back(api, seed):
    _, admin = admin_client(api, seed)
    created = admin.post("/api/queues", json={"name": "sales", "timeout_hook_url": PUBLIC_HOOK})
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert (body["moh"], body["max_wait_seconds"], body["announce_position"], body["announce_interval_seconds"]) == \
        ("default", 300, True, 30)
    assert admin.get(f"/api/queues/{body['id']}").get_json() == body
    assert admin.patch(f"/api/queues/{body['id']}", json={"max_wait_seconds": 60}).get_json()["max_wait_seconds"] == 60


def test_given_a_queue_name_in_use_when_creating_then_409_queue_name_taken(api, seed):
    _, admin = admin_client(api, seed)
    admin.post("/api/queues", json={"name": "support"})
    assert_error(admin.post("/api/queues", json={"name": "support"}), 409, "queue_name_taken")
    _, other = admin_client(api, seed)
    assert other.post("/api/queues", json={"name": "support"}).status_code == 201  # per account


@pytest.mark.parametrize("case", cases("queues_bad.json"))
def test_given_an_invalid_queue_when_saved_then_422(api, seed, case):
    _, admin = admin_client(api, seed)
    body = assert_error(admin.post("/api/queues", json=case["body"]), 422, case["code"])
    if "field" in case:
        assert case["field"] in json.dumps(body["details"])


def test_given_no_queue_mgmt_license_when_managing_queues_or_agents_then_403_license_required(api, seed):
    _, admin = admin_client(api, seed, licenses=["api-access"])
    assert_error(admin.get("/api/queues"), 403, "license_required")
    assert_error(admin.post("/api/queues", json={"name": "q"}), 403, "license_required")
    assert_error(admin.get("/api/agents"), 403, "license_required")


def test_given_another_tenants_queue_when_accessed_then_404(api, seed, app_role_conn):
    _, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    queue = admin_a.post("/api/queues", json={"name": "vip"}).get_json()
    for response in (admin_b.get(f"/api/queues/{queue['id']}"),
                     admin_b.patch(f"/api/queues/{queue['id']}", json={"name": "x"}),
                     admin_b.delete(f"/api/queues/{queue['id']}")):
        assert_error(response, 404, "queue_not_found")
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM queues WHERE id = :i"), {"i": queue["id"]}).scalar() == 0
    assert admin_a.delete(f"/api/queues/{queue['id']}").status_code == 204


def test_given_a_supervisor_when_using_queues_then_they_read_every_queue_and_change_none(api, seed):
    tenant = seed.tenant()
    queue = seed.queue(tenant)
    seed.user(tenant, "sue", role="supervisor")
    seed.user(tenant, "amy", role="agent", agent=True)
    sue = api.login(tenant, "sue")

    listed = sue.get("/api/queues")

    assert [q["id"] for q in listed.get_json()["items"]] == [str(queue)]
    assert sue.get(f"/api/queues/{queue}").get_json()["id"] == str(queue)
    assert_error(sue.post("/api/queues", json={"name": "q"}), 403, "admin_required")
    assert_error(sue.patch(f"/api/queues/{queue}", json={"name": "x"}), 403, "admin_required")
    assert_error(sue.delete(f"/api/queues/{queue}"), 403, "admin_required")
    assert_error(api.login(tenant, "amy").get("/api/queues"), 403, "supervisor_required")


# --- users -----------------------------------------------------------------------------------

def test_given_a_new_user_when_created_then_password_is_bcrypt_and_never_returned_and_they_can_log_in(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    created = admin.post("/api/users", json={"username": "carol", "password": "carol-secret-pw",
                                             "role": "agent", "permissions": ["recordings.view"]})
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert "password" not in json.dumps(body) and "carol-secret-pw" not in created.get_data(as_text=True)
    assert body["role"] == "agent" and body["permissions"] == ["recordings.view"] and body["is_active"] is True
    with owner_engine.connect() as conn:
        stored = conn.execute(text("SELECT password_hash FROM users WHERE id = :i"), {"i": body["id"]}).scalar()
    assert stored.startswith("$2") and bcrypt.checkpw(b"carol-secret-pw", stored.encode())
    login = api.anonymous(tenant.host).post("/auth/login", json={"username": "carol", "password": "carol-secret-pw"})
    assert login.status_code == 200
    assert "carol" in json.dumps(admin.get("/api/users").get_json())


@pytest.mark.parametrize("case", cases("users_bad.json"))
def test_given_an_invalid_user_when_created_then_422_names_the_field(api, seed, case):
    _, admin = admin_client(api, seed)
    body = assert_error(admin.post("/api/users", json=case["body"]), 422, "validation_failed")
    assert case["field"] in json.dumps(body["details"])


def test_given_a_username_in_use_when_creating_then_409_username_taken(api, seed):
    _, admin = admin_client(api, seed)
    assert_error(admin.post("/api/users", json={"username": "admin", "password": "long-enough-pass"}), 409, "username_taken")


def test_given_the_acting_admin_when_deleting_or_demoting_self_then_409_cannot_change_self(api, seed):
    tenant, admin = admin_client(api, seed)
    me = tenant.admin.id
    assert_error(admin.delete(f"/api/users/{me}"), 409, "cannot_change_self")
    assert_error(admin.patch(f"/api/users/{me}", json={"role": "agent"}), 409, "cannot_change_self")
    assert_error(admin.patch(f"/api/users/{me}", json={"is_active": False}), 409, "cannot_change_self")


def test_given_a_password_change_when_patched_then_the_new_password_logs_in(api, seed):
    tenant, admin = admin_client(api, seed)
    user = admin.post("/api/users", json={"username": "dave", "password": "first-password"}).get_json()
    assert admin.patch(f"/api/users/{user['id']}", json={"password": "second-password"}).status_code == 200
    anon = api.anonymous(tenant.host)
    assert anon.post("/auth/login", json={"username": "dave", "password": "first-password"}).status_code == 401
    assert anon.post("/auth/login", json={"username": "dave", "password": "second-password"}).status_code == 200


def test_given_another_tenants_user_when_accessed_then_404(api, seed):
    tenant_a, _ = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    victim = tenant_a.admin.id
    for response in (admin_b.get(f"/api/users/{victim}"),
                     admin_b.patch(f"/api/users/{victim}", json={"password": "taken-over-pass"}),
                     admin_b.delete(f"/api/users/{victim}")):
        assert_error(response, 404, "user_not_found")


def test_given_an_agent_session_when_managing_users_then_403_admin_required(api, seed):
    tenant = seed.tenant()
    seed.user(tenant, "sup", role="supervisor", permissions=["recordings.view", "api_keys.create"])
    assert_error(api.login(tenant, "sup").post("/api/users", json={"username": "x", "password": "long-enough-pass"}),
                 403, "admin_required")


# --- agents ----------------------------------------------------------------------------------

def test_given_a_user_and_queues_when_made_an_agent_then_memberships_are_listed_and_replaced(api, seed):
    _, admin = admin_client(api, seed)
    user = admin.post("/api/users", json={"username": "erin", "password": "long-enough-pass"}).get_json()
    q1 = admin.post("/api/queues", json={"name": "q1"}).get_json()
    q2 = admin.post("/api/queues", json={"name": "q2"}).get_json()
    created = admin.post("/api/agents", json={"user_id": user["id"], "contact": "user/1001", "queue_ids": [q1["id"]]})
    assert created.status_code == 201, created.get_json()
    agent = created.get_json()
    assert agent["username"] == "erin" and agent["state"] == "offline" and agent["queue_ids"] == [q1["id"]]
    assert_error(admin.post("/api/agents", json={"user_id": user["id"]}), 409, "agent_exists")
    changed = admin.patch(f"/api/agents/{agent['id']}", json={"queue_ids": [q2["id"]]}).get_json()
    assert changed["queue_ids"] == [q2["id"]] and changed["contact"] == "user/1001"
    in_q2 = admin.get(f"/api/agents?queue_id={q2['id']}").get_json()["items"]
    assert [a["id"] for a in in_q2] == [agent["id"]]
    assert admin.get(f"/api/agents?queue_id={q1['id']}").get_json()["items"] == []


def test_given_memberships_with_tiers_when_saved_then_they_read_back_and_queue_ids_means_tier_1(api, seed):
    _, admin = admin_client(api, seed)
    user = admin.post("/api/users", json={"username": "tia", "password": "long-enough-pass"}).get_json()
    q1 = admin.post("/api/queues", json={"name": "t1", "strategy": "ring_all"}).get_json()
    q2 = admin.post("/api/queues", json={"name": "t2"}).get_json()
    assert (q1["strategy"], q2["strategy"], q2["short_abandon_seconds"], q2["service_level_seconds"]) == \
        ("ring_all", "longest_idle", 5, 20)
    assert admin.patch(f"/api/queues/{q2['id']}", json={"strategy": "fewest_calls"}).get_json()["strategy"] == "fewest_calls"
    created = admin.post("/api/agents", json={"user_id": user["id"], "memberships": [
        {"queue_id": q1["id"], "tier": 2}, {"queue_id": q2["id"]}]})
    assert created.status_code == 201, created.get_json()
    agent = created.get_json()
    assert agent["memberships"] == [{"queue_id": q1["id"], "tier": 2}, {"queue_id": q2["id"], "tier": 1}]
    assert agent["queue_ids"] == [q1["id"], q2["id"]]
    changed = admin.patch(f"/api/agents/{agent['id']}", json={"queue_ids": [q1["id"]]}).get_json()
    assert changed["memberships"] == [{"queue_id": q1["id"], "tier": 1}]
    for bad, field in (({"memberships": [{"queue_id": q1["id"], "tier": 10}]}, "tier"),
                       ({"memberships": [{"queue_id": q1["id"], "tier": 0}]}, "tier"),
                       ({"memberships": [{"tier": 1}]}, "queue_id"),
                       ({"memberships": [], "queue_ids": []}, "memberships")):
        body = assert_error(admin.patch(f"/api/agents/{agent['id']}", json=bad), 422, "validation_failed")
        assert field in json.dumps(body["details"])
    _, other = admin_client(api, seed)
    theirs = other.post("/api/queues", json={"name": "theirs"}).get_json()
    assert_error(admin.patch(f"/api/agents/{agent['id']}", json={"memberships": [{"queue_id": theirs["id"]}]}),
                 422, "invalid_reference")


def test_given_foreign_user_or_queue_when_creating_an_agent_then_422_invalid_reference(api, seed):
    tenant_a, admin_a = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    foreign_queue = admin_b.post("/api/queues", json={"name": "theirs"}).get_json()
    assert_error(admin_b.post("/api/agents", json={"user_id": str(tenant_a.admin.id)}), 422, "invalid_reference")
    user = admin_a.post("/api/users", json={"username": "fay", "password": "long-enough-pass"}).get_json()
    response = admin_a.post("/api/agents", json={"user_id": user["id"], "queue_ids": [foreign_queue["id"]]})
    assert_error(response, 422, "invalid_reference")


def test_given_another_tenants_agent_when_accessed_then_404(api, seed):
    _, admin_a = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    user = admin_a.post("/api/users", json={"username": "gus", "password": "long-enough-pass"}).get_json()
    agent = admin_a.post("/api/agents", json={"user_id": user["id"]}).get_json()
    for response in (admin_b.get(f"/api/agents/{agent['id']}"),
                     admin_b.patch(f"/api/agents/{agent['id']}", json={"contact": "user/1001"}),
                     admin_b.delete(f"/api/agents/{agent['id']}")):
        assert_error(response, 404, "agent_not_found")
    assert admin_a.delete(f"/api/agents/{agent['id']}").status_code == 204
