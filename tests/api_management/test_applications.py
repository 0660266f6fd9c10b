"""/api/applications: create/read/update/delete, validation, admin-only, tenant isolation."""
from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from app.models import CallFlow
from tests.api_management.helpers import PUBLIC_HOOK, admin_client, assert_error, cases, insert
from tests.plugins.database import set_tenant


@pytest.mark.parametrize("case", cases("applications_create_good.json"))
def test_given_a_valid_body_when_creating_an_application_then_201_and_it_reads_back(api, seed, case):
    _, admin = admin_client(api, seed)
    response = admin.post("/api/applications", json=case["body"])
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    for name, value in case["body"].items():
        if name != "basic_auth_password":
            assert created[name] == value
    assert created["call_hook_method"] == case["body"].get("call_hook_method", "POST")
    fetched = admin.get(f"/api/applications/{created['id']}").get_json()
    assert fetched == created


@pytest.mark.parametrize("case", cases("applications_create_bad.json"))
def test_given_an_invalid_body_when_creating_an_application_then_422_with_a_stable_code(api, seed, case):
    _, admin = admin_client(api, seed)
    response = admin.post("/api/applications", json=case["body"])
    body = assert_error(response, case["status"], case["code"])
    if "field" in case:
        assert case["field"] in json.dumps(body["details"])


def test_given_an_unknown_verb_in_app_json_when_saving_then_the_error_names_the_item(api, seed):
    _, admin = admin_client(api, seed)
    response = admin.post("/api/applications", json={
        "name": "x", "app_json": [{"verb": "say", "text": "hi"}, {"verb": "dance"}]})
    details = assert_error(response, 422, "verb_list_rejected")["details"]
    assert any(item["index"] == 1 for item in details)


def test_given_a_basic_auth_password_when_reading_the_application_then_it_is_never_returned(api, seed, owner_engine):
    _, admin = admin_client(api, seed)
    created = admin.post("/api/applications", json={
        "name": "a", "basic_auth_username": "u", "basic_auth_password": "s3cret-value"}).get_json()
    raw = json.dumps(admin.get(f"/api/applications/{created['id']}").get_json())
    assert "s3cret-value" not in raw and created["has_basic_auth_password"] is True
    with owner_engine.connect() as conn:
        stored = conn.execute(text("SELECT basic_auth_password_encrypted FROM applications WHERE id = :i"),
                              {"i": created["id"]}).scalar()
    assert stored and "s3cret-value" not in stored


def test_given_a_flow_of_the_account_when_attaching_it_then_saved_and_a_foreign_flow_is_422(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    other = seed.tenant()
    mine = CallFlow(id=uuid.uuid4(), account_id=tenant.account_id, name="f", definition={})
    theirs = CallFlow(id=uuid.uuid4(), account_id=other.account_id, name="f", definition={})
    insert(owner_engine, mine, theirs)
    ok = admin.post("/api/applications", json={"name": "a", "call_flow_sid": str(mine.id)})
    assert ok.status_code == 201 and ok.get_json()["call_flow_sid"] == str(mine.id)
    refused = admin.post("/api/applications", json={"name": "b", "call_flow_sid": str(theirs.id)})
    assert_error(refused, 422, "invalid_reference")


def test_given_an_application_when_patching_then_only_given_fields_change_and_null_clears(api, seed):
    _, admin = admin_client(api, seed)
    app_id = admin.post("/api/applications", json={"name": "a", "call_hook_url": PUBLIC_HOOK,
                                                   "language": "de-DE"}).get_json()["id"]
    response = admin.patch(f"/api/applications/{app_id}", json={"name": "b", "call_hook_url": None})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["name"] == "b" and body["call_hook_url"] is None and body["language"] == "de-DE"
    assert_error(admin.patch(f"/api/applications/{app_id}", json={"call_hook_url": "https://10.0.0.1/"}),
                 422, "unsafe_url")


def test_given_pages_when_listing_applications_then_cursor_walks_every_row_once(api, seed):
    _, admin = admin_client(api, seed)
    ids = {admin.post("/api/applications", json={"name": f"a{i}"}).get_json()["id"] for i in range(5)}
    seen, cursor = [], None
    while True:
        query = "?limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = admin.get("/api/applications" + query).get_json()
        assert len(page["items"]) <= 2
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert sorted(seen) == sorted(ids)


def test_given_a_forged_cursor_when_listing_then_400_invalid_cursor(api, seed):
    _, admin = admin_client(api, seed)
    assert_error(admin.get("/api/applications?cursor=not-a-cursor"), 400, "invalid_cursor")
    assert_error(admin.get("/api/applications?cursor=WyJ4Il0"), 400, "invalid_cursor")  # ["x"]


def test_given_an_agent_when_managing_applications_then_403_admin_required(api, seed):
    tenant = seed.tenant()
    seed.user(tenant, "agent1", role="agent", permissions=["recordings.view"])
    agent = api.login(tenant, "agent1")
    assert_error(agent.get("/api/applications"), 403, "admin_required")
    assert_error(agent.post("/api/applications", json={"name": "a"}), 403, "admin_required")


def test_given_another_tenants_application_when_reading_changing_or_deleting_then_404(api, seed, app_role_conn):
    tenant_a, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    app_id = admin_a.post("/api/applications", json={"name": "secret"}).get_json()["id"]
    for response in (admin_b.get(f"/api/applications/{app_id}"),
                     admin_b.patch(f"/api/applications/{app_id}", json={"name": "x"}),
                     admin_b.delete(f"/api/applications/{app_id}")):
        assert_error(response, 404, "application_not_found")
    assert app_id not in json.dumps(admin_b.get("/api/applications").get_json())
    assert admin_a.get(f"/api/applications/{app_id}").get_json()["name"] == "secret"
    # the database wall alone: sbc_app scoped to B sees nothing of A
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM applications WHERE id = :i"),
                                     {"i": app_id}).scalar() == 0
        set_tenant(app_role_conn, tenant_a.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM applications WHERE id = :i"),
                                     {"i": app_id}).scalar() == 1


def test_given_an_application_used_by_a_number_when_deleting_then_409_application_in_use(api, seed, owner_engine):
    from app.models import PhoneNumber
    from tests.plugins.database import unique_number

    tenant, admin = admin_client(api, seed)
    app_id = admin.post("/api/applications", json={"name": "a"}).get_json()["id"]
    insert(owner_engine, PhoneNumber(id=uuid.uuid4(), account_id=tenant.account_id,
                                     number=unique_number(), application_id=uuid.UUID(app_id)))
    assert_error(admin.delete(f"/api/applications/{app_id}"), 409, "application_in_use")
    free = admin.post("/api/applications", json={"name": "b"}).get_json()["id"]
    assert admin.delete(f"/api/applications/{free}").status_code == 204
    assert_error(admin.get(f"/api/applications/{free}"), 404, "application_not_found")


def test_given_static_verbs_when_patching_app_json_to_null_then_the_list_is_removed(api, seed):
    _, admin = admin_client(api, seed)
    app_id = admin.post("/api/applications", json={"name": "a", "app_json": [{"verb": "hangup"}]}).get_json()["id"]
    response = admin.patch(f"/api/applications/{app_id}", json={"app_json": None})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["app_json"] is None
