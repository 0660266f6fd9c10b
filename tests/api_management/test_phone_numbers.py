"""/api/phone-numbers and the answering settings rules of the SPEC."""
from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from app.crypto import decrypt_secret
from app.models import Application, CallFlow
from tests.api_management.helpers import PUBLIC_HOOK, admin_client, assert_error, cases, insert
from tests.plugins.database import set_tenant, unique_number

SECRET = "whsec-0123456789abcdefWXYZ"


def _flow(owner_engine, tenant, name="main") -> CallFlow:
    flow = CallFlow(id=uuid.uuid4(), account_id=tenant.account_id, name=name, definition={})
    insert(owner_engine, flow)
    return flow


def _app_with_flow(owner_engine, tenant, flow) -> Application:
    app = Application(id=uuid.uuid4(), account_id=tenant.account_id, name="shared", call_flow_sid=flow.id,
                      language="fr-FR", voice="v1")
    insert(owner_engine, app)
    return app


def _number(admin, app_id=None) -> dict:
    body = {"number": "+" + unique_number()}
    if app_id:
        body["application_id"] = str(app_id)
    response = admin.post("/api/phone-numbers", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _db_app(owner_engine, app_id) -> dict:
    with owner_engine.connect() as conn:
        row = conn.execute(text("SELECT * FROM applications WHERE id = :i"), {"i": str(app_id)}).mappings().one()
    return dict(row)


# --- numbers ---------------------------------------------------------------------------------

def test_given_a_number_with_plus_when_created_then_stored_as_digits_in_call_flow_mode(api, seed):
    _, admin = admin_client(api, seed)
    raw = unique_number()
    created = admin.post("/api/phone-numbers", json={"number": "+" + raw}).get_json()
    assert created["number"] == raw and created["answering_mode"] == "call_flow"
    assert admin.get(f"/api/phone-numbers/{created['id']}").get_json() == created


@pytest.mark.parametrize("case", cases("phone_numbers_create_bad.json"))
def test_given_an_invalid_number_body_when_creating_then_422_names_the_field(api, seed, case):
    _, admin = admin_client(api, seed)
    body = assert_error(admin.post("/api/phone-numbers", json=case["body"]), 422, "validation_failed")
    assert case["field"] in json.dumps(body["details"])


def test_given_a_number_held_by_another_tenant_when_adding_it_then_409_number_taken(api, seed):
    _, admin_a = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    number = _number(admin_a)["number"]
    assert_error(admin_b.post("/api/phone-numbers", json={"number": number}), 409, "number_taken")


def test_given_another_tenants_application_when_attaching_it_to_a_number_then_422(api, seed, owner_engine):
    _, admin = admin_client(api, seed)
    other = seed.tenant()
    foreign = Application(id=uuid.uuid4(), account_id=other.account_id, name="x")
    insert(owner_engine, foreign)
    response = admin.post("/api/phone-numbers", json={"number": unique_number(), "application_id": str(foreign.id)})
    assert_error(response, 422, "invalid_reference")
    num = _number(admin)
    assert_error(admin.patch(f"/api/phone-numbers/{num['id']}", json={"application_id": str(foreign.id)}),
                 422, "invalid_reference")


def test_given_another_tenants_number_when_reading_changing_or_deleting_then_404(api, seed, app_role_conn):
    tenant_a, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    num = _number(admin_a)
    for response in (admin_b.get(f"/api/phone-numbers/{num['id']}"),
                     admin_b.patch(f"/api/phone-numbers/{num['id']}", json={"application_id": None}),
                     admin_b.delete(f"/api/phone-numbers/{num['id']}"),
                     admin_b.get(f"/api/phone-numbers/{num['id']}/answering"),
                     admin_b.put(f"/api/phone-numbers/{num['id']}/answering",
                                 json={"mode": "webhook", "url": PUBLIC_HOOK})):
        assert_error(response, 404, "phone_number_not_found")
    assert num["number"] not in json.dumps(admin_b.get("/api/phone-numbers").get_json())
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM phone_numbers WHERE id = :i"),
                                     {"i": num["id"]}).scalar() == 0
    assert admin_a.get(f"/api/phone-numbers/{num['id']}/answering").get_json()["mode"] == "call_flow"


def test_given_a_number_when_deleted_then_it_is_gone(api, seed):
    _, admin = admin_client(api, seed)
    num = _number(admin)
    assert admin.delete(f"/api/phone-numbers/{num['id']}").status_code == 204
    assert_error(admin.get(f"/api/phone-numbers/{num['id']}"), 404, "phone_number_not_found")


def test_given_numbers_when_searching_by_part_of_a_number_then_only_the_accounts_matches_are_listed(api, seed):
    _, admin = admin_client(api, seed)
    _, other = admin_client(api, seed)
    stem = unique_number()[:9]
    mine = [_number(admin)["number"] for _ in range(2)]
    for suffix in ("01", "02", "03"):
        assert admin.post("/api/phone-numbers", json={"number": stem + suffix}).status_code == 201
    assert other.post("/api/phone-numbers", json={"number": stem + "04"}).status_code == 201
    first = admin.get("/api/phone-numbers", query_string={"number": "+" + stem, "limit": 2}).get_json()
    second = admin.get("/api/phone-numbers", query_string={"number": stem, "cursor": first["next_cursor"]}).get_json()
    assert [n["number"] for n in first["items"] + second["items"]] == [stem + "01", stem + "02", stem + "03"]
    assert second["next_cursor"] is None
    listed = [n["number"] for n in admin.get("/api/phone-numbers", query_string={"limit": 200}).get_json()["items"]]
    assert set(mine) <= set(listed) and len(listed) == 5


@pytest.mark.parametrize("search", ["55%", "_", "12-34", "+", "1" * 21])
def test_given_a_search_that_is_not_digits_when_listing_numbers_then_422_names_the_number_filter(api, seed, search):
    _, admin = admin_client(api, seed)
    body = assert_error(admin.get("/api/phone-numbers", query_string={"number": search}), 422, "validation_failed")
    assert "number" in body["details"]["query"]


# --- answering settings ----------------------------------------------------------------------

def test_given_no_programmable_voice_license_when_reading_answering_then_only_call_flow_is_offered(api, seed):
    _, admin = admin_client(api, seed, licenses=["api-access"])
    num = _number(admin)
    body = admin.get(f"/api/phone-numbers/{num['id']}/answering").get_json()
    assert body["available_modes"] == ["call_flow"] and body["mode"] == "call_flow" and body["webhook"] is None


def test_given_no_programmable_voice_license_when_choosing_webhook_then_403_license_required(api, seed, owner_engine):
    _, admin = admin_client(api, seed, licenses=["queue-mgmt"])
    num = _number(admin)
    response = admin.put(f"/api/phone-numbers/{num['id']}/answering", json={"mode": "webhook", "url": PUBLIC_HOOK})
    assert_error(response, 403, "license_required")
    assert admin.get(f"/api/phone-numbers/{num['id']}/answering").get_json()["mode"] == "call_flow"


@pytest.mark.parametrize("case", cases("answering_bad.json"))
def test_given_invalid_answering_settings_when_saving_then_refused_with_a_stable_code(api, seed, case):
    _, admin = admin_client(api, seed)
    num = _number(admin)
    body = assert_error(admin.put(f"/api/phone-numbers/{num['id']}/answering", json=case["body"]),
                        case["status"], case["code"])
    if "field" in case:
        assert case["field"] in json.dumps(body["details"])
    assert admin.get(f"/api/phone-numbers/{num['id']}/answering").get_json()["mode"] == "call_flow"


def test_given_webhook_mode_when_saved_then_method_defaults_to_post_and_secret_shows_only_last4(api, seed, owner_engine):
    _, admin = admin_client(api, seed)
    num = _number(admin)
    response = admin.put(f"/api/phone-numbers/{num['id']}/answering",
                         json={"mode": "webhook", "url": PUBLIC_HOOK, "signing_secret": SECRET})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["mode"] == "webhook" and body["available_modes"] == ["call_flow", "webhook"]
    assert body["webhook"]["url"] == PUBLIC_HOOK and body["webhook"]["method"] == "POST"
    assert body["webhook"]["signing_secret_last4"] == "WXYZ" and body["webhook"]["has_signing_secret"] is True
    again = admin.get(f"/api/phone-numbers/{num['id']}/answering")
    for raw in (response.get_data(as_text=True), again.get_data(as_text=True),
                admin.get(f"/api/applications/{body['application_id']}").get_data(as_text=True)):
        assert SECRET not in raw and SECRET[:-4] not in raw
    stored = _db_app(owner_engine, body["application_id"])
    assert SECRET not in stored["signing_secret_encrypted"]
    assert decrypt_secret(stored["signing_secret_encrypted"]) == SECRET
    assert stored["call_hook_method"] == "POST" and stored["call_flow_sid"] is None


def test_given_webhook_mode_when_updating_without_secret_then_secret_is_kept_and_null_removes_it(api, seed):
    _, admin = admin_client(api, seed)
    num = _number(admin)
    path = f"/api/phone-numbers/{num['id']}/answering"
    admin.put(path, json={"mode": "webhook", "url": PUBLIC_HOOK, "signing_secret": SECRET, "method": "GET"})
    kept = admin.put(path, json={"mode": "webhook", "url": "https://8.8.4.4/new"}).get_json()["webhook"]
    assert kept["signing_secret_last4"] == "WXYZ" and kept["url"] == "https://8.8.4.4/new"
    assert kept["method"] == "GET"
    removed = admin.put(path, json={"mode": "webhook", "url": PUBLIC_HOOK, "signing_secret": None}).get_json()
    assert removed["webhook"]["has_signing_secret"] is False and removed["webhook"]["signing_secret_last4"] is None


def test_given_a_number_answered_by_a_flow_when_switching_to_webhook_and_back_then_the_flow_is_restored(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    flow = _flow(owner_engine, tenant)
    app_id = admin.post("/api/applications", json={"name": "own", "call_flow_sid": str(flow.id)}).get_json()["id"]
    num = _number(admin, app_id)
    path = f"/api/phone-numbers/{num['id']}/answering"
    assert admin.get(path).get_json()["call_flow_sid"] == str(flow.id)

    webhook = admin.put(path, json={"mode": "webhook", "url": PUBLIC_HOOK, "signing_secret": SECRET}).get_json()
    assert webhook["call_flow_sid"] is None and webhook["saved_call_flow_sid"] == str(flow.id)
    assert webhook["application_id"] == app_id  # not shared: changed in place
    assert _db_app(owner_engine, app_id)["call_flow_sid"] is None

    back = admin.put(path, json={"mode": "call_flow"}).get_json()
    assert back["mode"] == "call_flow" and back["call_flow_sid"] == str(flow.id) and back["webhook"] is None
    stored = _db_app(owner_engine, app_id)
    assert stored["call_flow_sid"] == flow.id
    assert stored["call_hook_url"] is None and stored["signing_secret_encrypted"] is None


def test_given_a_shared_application_when_one_number_switches_to_webhook_then_it_gets_a_dedicated_application(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    flow = _flow(owner_engine, tenant)
    shared = _app_with_flow(owner_engine, tenant, flow)
    first, second = _number(admin, shared.id), _number(admin, shared.id)

    body = admin.put(f"/api/phone-numbers/{first['id']}/answering",
                     json={"mode": "webhook", "url": PUBLIC_HOOK}).get_json()
    assert body["application_id"] != str(shared.id)
    dedicated = admin.get(f"/api/applications/{body['application_id']}").get_json()
    assert dedicated["name"] == f"Webhook \u2014 {first['number']}"
    assert dedicated["call_hook_url"] == PUBLIC_HOOK and dedicated["call_flow_sid"] is None
    assert dedicated["language"] == "fr-FR" and dedicated["voice"] == "v1"
    # the other number and the shared application are untouched
    untouched = admin.get(f"/api/phone-numbers/{second['id']}/answering").get_json()
    assert untouched["application_id"] == str(shared.id) and untouched["call_flow_sid"] == str(flow.id)
    assert _db_app(owner_engine, shared.id)["call_hook_url"] is None

    back = admin.put(f"/api/phone-numbers/{first['id']}/answering", json={"mode": "call_flow"}).get_json()
    assert back["call_flow_sid"] == str(flow.id)
    assert admin.get(f"/api/phone-numbers/{second['id']}/answering").get_json()["call_flow_sid"] == str(flow.id)


def test_given_a_number_without_application_when_choosing_webhook_then_a_dedicated_application_is_created(api, seed):
    _, admin = admin_client(api, seed)
    num = _number(admin)
    body = admin.put(f"/api/phone-numbers/{num['id']}/answering",
                     json={"mode": "webhook", "url": PUBLIC_HOOK}).get_json()
    assert admin.get(f"/api/applications/{body['application_id']}").get_json()["name"] == \
        f"Webhook \u2014 {num['number']}"
    assert admin.get(f"/api/phone-numbers/{num['id']}").get_json()["application_id"] == body["application_id"]


def test_given_call_flow_mode_when_choosing_a_foreign_flow_then_422_and_own_flow_is_saved(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    other = seed.tenant()
    mine, theirs = _flow(owner_engine, tenant), _flow(owner_engine, other)
    num = _number(admin)
    path = f"/api/phone-numbers/{num['id']}/answering"
    assert_error(admin.put(path, json={"mode": "call_flow", "call_flow_sid": str(theirs.id)}), 422, "invalid_reference")
    body = admin.put(path, json={"mode": "call_flow", "call_flow_sid": str(mine.id)}).get_json()
    assert body["call_flow_sid"] == str(mine.id) and body["application_id"] is not None


def test_given_an_application_change_when_patching_a_number_then_the_mode_follows_the_new_application(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    flow = _flow(owner_engine, tenant)
    flow_app = admin.post("/api/applications", json={"name": "flow", "call_flow_sid": str(flow.id)}).get_json()
    hook_app = admin.post("/api/applications", json={"name": "hook", "call_hook_url": PUBLIC_HOOK}).get_json()
    num = _number(admin, flow_app["id"])
    admin.put(f"/api/phone-numbers/{num['id']}/answering", json={"mode": "webhook", "url": PUBLIC_HOOK})
    moved = admin.patch(f"/api/phone-numbers/{num['id']}", json={"application_id": flow_app["id"]}).get_json()
    assert moved["answering_mode"] == "webhook"  # same application: nothing changes
    other = _number(admin)
    attached = admin.patch(f"/api/phone-numbers/{other['id']}", json={"application_id": hook_app["id"]}).get_json()
    assert attached["answering_mode"] == "webhook"
    back = admin.patch(f"/api/phone-numbers/{other['id']}", json={"application_id": None}).get_json()
    assert back["answering_mode"] == "call_flow"
    created = admin.post("/api/phone-numbers", json={"number": unique_number(), "application_id": hook_app["id"]})
    assert created.get_json()["answering_mode"] == "webhook"


def test_given_a_number_answered_by_an_app_json_application_then_it_reports_no_call_flow_mode_but_app_json(api, seed):
    """SPEC's answering mode is Call flow or Your server (webhook); a static verb list is neither."""
    _, admin = admin_client(api, seed)
    app = admin.post("/api/applications", json={"name": "hello", "app_json": [{"verb": "hangup"}]}).get_json()
    num = _number(admin, app["id"])
    assert (num["answering_mode"], num["answered_by"]) == (None, "app_json")
    assert admin.get(f"/api/phone-numbers/{num['id']}").get_json() == num
    [listed] = [n for n in admin.get("/api/phone-numbers").get_json()["items"] if n["id"] == num["id"]]
    assert listed == num
    answering = admin.get(f"/api/phone-numbers/{num['id']}/answering").get_json()
    assert (answering["mode"], answering["answered_by"]) == (None, "app_json")
    chosen = admin.put(f"/api/phone-numbers/{num['id']}/answering", json={"mode": "webhook", "url": PUBLIC_HOOK})
    assert (chosen.get_json()["mode"], chosen.get_json()["answered_by"]) == ("webhook", "webhook")
    bare = _number(admin)
    assert (bare["answering_mode"], bare["answered_by"]) == ("call_flow", None)
