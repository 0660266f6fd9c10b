"""/api/call-records list (filters, cursor) and detail by public_id."""
from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import text

from tests.api_management.helpers import admin_client, assert_error, cases
from tests.api_management.records_seed import BASE_TIME, insert_records
from tests.plugins.database import set_tenant


def _all_pages(client, query: str = "", limit: int = 7) -> list[dict]:
    items, cursor = [], None
    while True:
        url = f"/api/call-records?limit={limit}" + (f"&{query}" if query else "") + (f"&cursor={cursor}" if cursor else "")
        response = client.get(url)
        assert response.status_code == 200, response.get_json()
        page = response.get_json()
        items += page["items"]
        cursor = page["next_cursor"]
        if not cursor:
            return items


def test_given_records_when_listing_pages_then_newest_first_without_gaps_or_repeats(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 20)
    items = _all_pages(admin)
    assert len(items) == 20 and len({i["id"] for i in items}) == 20
    times = [i["started_at"] for i in items]
    assert times == sorted(times, reverse=True)
    assert "trace_id" in items[0] and "public_id" not in items[0]


def test_given_filters_when_listing_then_only_matching_records_are_returned(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    agent, queue = uuid.uuid4(), uuid.uuid4()
    insert_records(owner_engine, tenant.account_id, 3, direction="outbound", status="busy")
    insert_records(owner_engine, tenant.account_id, 4, agent_id=agent, queue_id=queue,
                   start=BASE_TIME - timedelta(days=1))
    assert len(_all_pages(admin, "direction=outbound")) == 3
    assert len(_all_pages(admin, "status=busy")) == 3
    assert len(_all_pages(admin, f"agent_id={agent}")) == 4
    assert len(_all_pages(admin, f"queue_id={queue}&direction=inbound")) == 4
    since = (BASE_TIME - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    assert len(_all_pages(admin, f"from={since}")) == 3
    assert len(_all_pages(admin, f"to={since}")) == 4


def test_given_records_of_an_agent_and_a_queue_when_listing_or_reading_then_their_names_come_with_the_ids(
        api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    seed.user(tenant, "anna", agent=True)
    with owner_engine.connect() as conn:
        agent = conn.execute(text("SELECT a.id FROM agents a JOIN users u ON u.id = a.user_id "
                                  "WHERE u.username = 'anna' AND a.account_id = :t"),
                             {"t": tenant.account_id}).scalar_one()
    queue = seed.queue(tenant, "Sales")
    insert_records(owner_engine, tenant.account_id, 2, agent_id=agent, queue_id=queue)
    insert_records(owner_engine, tenant.account_id, 1, agent_id=uuid.uuid4(), start=BASE_TIME - timedelta(days=1))
    items = _all_pages(admin)
    assert [(i["agent_name"], i["queue_name"]) for i in items] == [("anna", "Sales")] * 2 + [(None, None)]
    detail = admin.get(f"/api/call-records/{items[0]['id']}").get_json()
    assert (detail["agent_id"], detail["agent_name"], detail["queue_name"]) == (str(agent), "anna", "Sales")


@pytest.mark.parametrize("case", cases("call_records_list_bad_query.json"))
def test_given_an_invalid_query_when_listing_then_422_names_the_parameter(api, seed, case):
    _, admin = admin_client(api, seed)
    body = assert_error(admin.get("/api/call-records?" + case["query"]), 422, "validation_failed")
    assert case["field"] in json.dumps(body["details"])


def test_given_a_record_with_summary_when_reading_by_public_id_then_the_summary_is_merged(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 1, with_summary=True)
    record = _all_pages(admin)[0]
    detail = admin.get(f"/api/call-records/{record['id']}").get_json()
    assert detail["id"] == record["id"]
    assert detail["summary"]["queue_wait_ms"] == 12400 and detail["summary"]["disposition"] == "resolved"


def test_given_a_user_without_recordings_view_when_reading_records_then_403_permission_denied(api, seed, owner_engine):
    tenant = seed.tenant()
    insert_records(owner_engine, tenant.account_id, 1)
    seed.user(tenant, "plain", role="agent")
    seed.user(tenant, "viewer", role="agent", permissions=["recordings.view"])
    plain, viewer = api.login(tenant, "plain"), api.login(tenant, "viewer")
    assert_error(plain.get("/api/call-records"), 403, "permission_denied")
    record = viewer.get("/api/call-records").get_json()["items"][0]
    assert_error(plain.get(f"/api/call-records/{record['id']}"), 403, "permission_denied")
    assert viewer.get(f"/api/call-records/{record['id']}").status_code == 200


def test_given_another_tenants_record_when_listing_or_reading_then_it_is_invisible(api, seed, owner_engine, app_role_conn):
    tenant_a, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    insert_records(owner_engine, tenant_a.account_id, 3)
    a_ids = {i["id"] for i in _all_pages(admin_a)}
    assert _all_pages(admin_b) == []
    for public_id in a_ids:
        assert_error(admin_b.get(f"/api/call-records/{public_id}"), 404, "call_record_not_found")
    assert_error(admin_b.get(f"/api/call-records/{uuid.uuid4()}"), 404, "call_record_not_found")
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM call_records")).scalar() == 0
        set_tenant(app_role_conn, tenant_a.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM call_records")).scalar() == 3


def test_given_a_number_search_when_listing_then_caller_or_callee_containing_the_digits_match(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 12)  # callers 15550000000…011, callees 18005550000…9
    assert len(_all_pages(admin, "number=1555000001")) == 2   # callers …010 and …011
    assert len(_all_pages(admin, "number=%2B18005550003")) == 1  # the callee of the 4th, a leading + ignored
    assert len(_all_pages(admin, "number=1555&direction=outbound")) == 0
