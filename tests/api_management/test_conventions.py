"""One convention across the API (docs/api.md "Conventions"): snake_case fields and
{items, next_cursor} lists — with the v1 forms clients already use still answered."""
from __future__ import annotations

import uuid

from app.models import Application, PhoneNumber
from tests.api_management.helpers import admin_client, insert


def _number_and_app(owner_engine, tenant) -> tuple[str, uuid.UUID]:
    number = "1555" + str(uuid.uuid4().int)[:7]
    app = Application(id=uuid.uuid4(), account_id=tenant.account_id, name="app",
                      app_json=[{"verb": "say", "text": "hello"}])
    insert(owner_engine, app, PhoneNumber(account_id=tenant.account_id, number=number, application_id=app.id))
    return number, app.id


def test_given_snake_case_application_sid_when_placing_a_call_then_202_with_snake_and_v1_ids(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    number, app_id = _number_and_app(owner_engine, tenant)
    for spelling in ("application_sid", "applicationSid"):
        response = admin.post("/api/calls", json={"to": "4915112345678", "from": number, spelling: str(app_id)})
        assert response.status_code == 202, response.get_json()
        body = response.get_json()
        assert body["call_id"] == body["callId"] and body["trace_id"] == body["traceId"]
        assert admin.get(f"/api/calls/{body['call_id']}").get_json()["state"] == "queued"


def test_given_no_or_two_different_application_ids_when_placing_a_call_then_422(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    number, app_id = _number_and_app(owner_engine, tenant)
    missing = admin.post("/api/calls", json={"to": "4915112345678", "from": number})
    assert missing.status_code == 422 and "application_sid" in missing.get_json()["details"]["json"]
    both = admin.post("/api/calls", json={"to": "4915112345678", "from": number,
                                          "application_sid": str(app_id), "applicationSid": str(uuid.uuid4())})
    assert both.status_code == 422


def test_given_api_keys_when_listing_with_envelope_then_cursor_pages_and_default_stays_an_array(api, seed):
    tenant, admin = admin_client(api, seed)
    created = [admin.post("/api/api-keys", json={"name": f"k{i}"}).get_json()["id"] for i in range(3)]
    legacy = admin.get("/api/api-keys").get_json()
    assert isinstance(legacy, list) and len(legacy) == 3
    first = admin.get("/api/api-keys", query_string={"envelope": "true", "limit": 2}).get_json()
    assert len(first["items"]) == 2 and first["next_cursor"]
    second = admin.get("/api/api-keys", query_string={"envelope": "true", "limit": 2,
                                                      "cursor": first["next_cursor"]}).get_json()
    assert second["next_cursor"] is None
    assert sorted(k["id"] for k in first["items"] + second["items"]) == sorted(created)


def test_given_callbacks_of_mixed_priority_when_paged_with_envelope_then_dispatch_order_is_kept(api, seed):
    tenant, admin = admin_client(api, seed)
    queue = seed.queue(tenant)
    path = f"/api/queues/{queue}/callbacks"
    for priority in (0, 5, 0, 5, -3, 0):
        assert admin.post(path, json={"phone_number": "15550001111", "priority": priority}).status_code == 201
    legacy = admin.get(path).get_json()
    assert isinstance(legacy, list) and [c["priority"] for c in legacy] == [5, 5, 0, 0, 0, -3]
    seen, cursor = [], None
    while True:
        query = {"envelope": "true", "limit": 2, **({"cursor": cursor} if cursor else {})}
        page = admin.get(path, query_string=query).get_json()
        seen += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [c["id"] for c in seen] == [c["id"] for c in legacy]


def test_given_mixed_paging_styles_on_callbacks_then_422(api, seed):
    tenant, admin = admin_client(api, seed)
    path = f"/api/queues/{seed.queue(tenant)}/callbacks"
    assert admin.get(path, query_string={"envelope": "true", "offset": 5}).status_code == 422
    assert admin.get(path, query_string={"cursor": "abc"}).status_code == 422
