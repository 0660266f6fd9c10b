"""Campaigns that can dial: the state machine through the API (start/pause/resume/stop/archive,
scheduling, readiness), contacts as JSON and CSV (all or nothing, E.164, time zones), the
do-not-call list (JSON, CSV, isolation), dialling settings and dispositions."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.api_management.helpers import admin_client, assert_error
from tests.plugins.database import set_tenant, unique_number

CSV = Path(__file__).resolve().parents[1] / "fixtures" / "campaigns"


def _ready_campaign(admin, **extra) -> dict:
    number = admin.post("/api/phone-numbers", json={"number": unique_number()}).get_json()["number"]
    carrier = admin.post("/api/carriers", json={"name": "trunk"}).get_json()["id"]
    queue = admin.post("/api/queues", json={"name": "outbound"}).get_json()["id"]
    user = admin.post("/api/users", json={"username": "dialer-agent", "password": "long-enough-pass"}).get_json()
    agent = admin.post("/api/agents", json={"user_id": user["id"], "contact": "user/1001", "queue_ids": [queue]})
    assert agent.status_code == 201, agent.get_json()
    created = admin.post("/api/campaigns", json={"name": "Renewals", "dialer_mode": "predictive", "caller_id": number,
                                                 "carrier_id": carrier, "agent_group_ids": [queue], **extra})
    assert created.status_code == 201, created.get_json()
    return created.get_json()


def _upload(client, path: str, fixture: str, content_type: str = "text/csv"):
    return client.post(path, data=(CSV / fixture).read_bytes(), headers={"Content-Type": content_type})


def test_given_a_ready_campaign_when_started_paused_resumed_stopped_and_archived_then_each_state_is_reported(api, seed):
    _, admin = admin_client(api, seed)
    campaign = _ready_campaign(admin)
    base = f"/api/campaigns/{campaign['id']}"
    seen = []
    for action in ("start", "pause", "resume", "pause", "stop", "archive"):
        response = admin.post(f"{base}/{action}", json={})
        assert response.status_code == 200, response.get_json()
        seen.append(response.get_json()["status"])
    assert seen == ["running", "paused", "running", "paused", "completed", "archived"]
    assert admin.get(base).get_json()["status"] == "archived"


@pytest.mark.parametrize(("moves", "action", "current"), [
    ((), "pause", "draft"), ((), "resume", "draft"), ((), "stop", "draft"),
    (("start",), "start", "running"), (("start",), "archive", "running"), (("start", "stop"), "resume", "completed"),
])
def test_given_a_campaign_when_an_action_is_not_legal_from_its_state_then_409_illegal_transition(
        api, seed, moves, action, current):
    _, admin = admin_client(api, seed)
    base = f"/api/campaigns/{_ready_campaign(admin)['id']}"
    for move in moves:
        assert admin.post(f"{base}/{move}", json={}).status_code == 200
    body = assert_error(admin.post(f"{base}/{action}", json={}), 409, "illegal_transition")
    assert body["details"]["status"] == current and current in body["message"]
    assert admin.get(base).get_json()["status"] == current


def test_given_a_future_time_when_started_then_scheduled_at_that_time_and_a_past_time_runs_now(api, seed):
    _, admin = admin_client(api, seed)
    later = (datetime.now(timezone.utc) + timedelta(hours=3)).replace(microsecond=0)
    base = f"/api/campaigns/{_ready_campaign(admin)['id']}"
    scheduled = admin.post(f"{base}/start", json={"at": later.isoformat()}).get_json()
    assert scheduled["status"] == "scheduled"
    assert datetime.fromisoformat(scheduled["scheduled_at"]) == later
    assert admin.post(f"{base}/start", json={"at": "2020-01-01T00:00:00Z"}).get_json()["status"] == "running"
    assert_error(admin.post(f"{base}/pause", json={"at": later.isoformat()}), 422, "validation_failed")


def test_given_a_campaign_without_trunk_caller_id_or_agents_when_started_then_422_naming_what_is_missing(api, seed):
    _, admin = admin_client(api, seed)
    empty_queue = admin.post("/api/queues", json={"name": "nobody"}).get_json()["id"]
    campaign = admin.post("/api/campaigns", json={"name": "c", "agent_group_ids": [empty_queue]}).get_json()
    body = assert_error(admin.post(f"/api/campaigns/{campaign['id']}/start", json={}), 422, "campaign_not_ready")
    assert set(body["details"]) == {"carrier_id", "caller_id", "agent_group_ids"}
    assert body["details"]["agent_group_ids"] == ["The agent groups have no agents."]
    assert admin.get(f"/api/campaigns/{campaign['id']}").get_json()["status"] == "draft"


def test_given_the_old_patch_status_when_it_is_a_legal_move_then_applied_else_409(api, seed):
    _, admin = admin_client(api, seed)
    base = f"/api/campaigns/{_ready_campaign(admin)['id']}"
    assert admin.patch(base, json={"status": "running"}).get_json()["status"] == "running"
    assert admin.patch(base, json={"status": "paused"}).get_json()["status"] == "paused"
    assert_error(admin.patch(base, json={"status": "draft"}), 409, "illegal_transition")
    assert_error(admin.delete(base), 409, "campaign_active")
    assert_error(admin.post("/api/campaigns", json={"name": "x", "status": "running"}), 422, "validation_failed")


def test_given_dialling_settings_when_saved_then_returned_with_retry_defaults_filled_in(api, seed):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={
        "name": "c", "window_start": "09:30", "window_end": "18:00", "allowed_weekdays": [5, 1, 1, 3],
        "retry_policy": {"busy": {"delay_seconds": 300, "max_attempts": 5}},
        "power_ratio": 2.5, "abandon_cap_percent": 2.0}).get_json()
    assert (campaign["window_start"], campaign["window_end"], campaign["allowed_weekdays"]) == ("09:30", "18:00", [1, 3, 5])
    assert campaign["retry_policy"]["busy"] == {"delay_seconds": 300, "max_attempts": 5}
    assert campaign["retry_policy"]["no_answer"] == {"delay_seconds": 3600, "max_attempts": 3}
    assert (campaign["power_ratio"], campaign["abandon_cap_percent"]) == (2.5, 2.0)
    default = admin.post("/api/campaigns", json={"name": "d"}).get_json()
    assert (default["window_start"], default["window_end"], default["allowed_weekdays"]) == ("08:00", "21:00",
                                                                                            [1, 2, 3, 4, 5, 6, 7])
    assert_error(admin.patch(f"/api/campaigns/{default['id']}", json={"window_end": "07:00"}), 422, "validation_failed")
    for bad in ({"window_start": "25:00"}, {"allowed_weekdays": [0]}, {"retry_policy": {"ringing": {}}},
                {"retry_policy": {"busy": {"delay_seconds": 1, "max_attempts": 0}}}, {"power_ratio": 9}):
        assert_error(admin.patch(f"/api/campaigns/{default['id']}", json=bad), 422, "validation_failed")


# --- contacts ------------------------------------------------------------------------------------

def test_given_a_csv_of_contacts_when_uploaded_then_all_imported_with_given_or_derived_time_zones(api, seed):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts"
    response = _upload(admin, path + "/import", "contacts_good.csv")
    assert response.status_code == 201, response.get_json()
    assert response.get_json() == {"created": 4}
    by_number = {c["phone_number"]: c for c in admin.get(path).get_json()["items"]}
    assert by_number["12125550101"]["time_zones"] == ["America/New_York"]
    assert by_number["12125550101"]["time_zone"] is None
    assert by_number["12125550101"]["attributes"] == {"tier": "gold"}
    assert by_number["14155550102"]["time_zones"] == ["America/Los_Angeles"]
    assert by_number["33123456789"]["time_zones"] == ["Europe/Paris"] and by_number["33123456789"]["name"] == "Marie"
    assert by_number["18005550103"]["time_zones"] == ["America/Chicago"]


@pytest.mark.parametrize(("fixture", "code", "row", "field"), [
    ("contacts_bad_row.csv", "validation_failed", 4, "phone_number"),
    ("contacts_duplicate.csv", "validation_failed", 4, "phone_number"),
    ("contacts_ragged.csv", "invalid_csv", 3, None),
    ("contacts_no_number_column.csv", "invalid_csv", 1, None),
])
def test_given_a_csv_with_a_bad_row_when_uploaded_then_422_names_the_row_and_nothing_is_imported(
        api, seed, fixture, code, row, field):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts"
    body = assert_error(_upload(admin, path + "/import", fixture), 422, code)
    first = body["details"]["rows"][0]
    assert first["row"] == row and f"row {row}" in body["message"].lower()
    if field:
        assert first["field"] == field
    assert admin.get(path).get_json()["items"] == []


def test_given_a_csv_with_several_bad_rows_when_uploaded_then_each_bad_row_is_listed(api, seed):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    body = assert_error(_upload(admin, f"/api/campaigns/{campaign['id']}/contacts/import", "contacts_bad_row.csv"),
                        422, "validation_failed")
    assert [(e["row"], e["field"]) for e in body["details"]["rows"]] == [(4, "phone_number"), (5, "time_zone")]


def test_given_a_csv_body_sent_as_json_or_a_file_too_many_rows_when_uploaded_then_refused(api, seed, monkeypatch):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts/import"
    assert_error(_upload(admin, path, "contacts_good.csv", "text/plain"), 415, "unsupported_media_type")
    monkeypatch.setattr("app.limits.CAMPAIGN_CSV_MAX_ROWS", 3)
    body = assert_error(_upload(admin, path, "contacts_good.csv"), 422, "invalid_csv")
    assert "More than 3 rows" in body["message"]
    assert admin.get(f"/api/campaigns/{campaign['id']}/contacts").get_json()["items"] == []


def test_given_json_contacts_when_one_is_not_e164_or_already_listed_then_422_naming_the_item(api, seed):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts"
    body = assert_error(admin.post(path, json={"contacts": [{"phone_number": "+12125550101"},
                                                            {"phone_number": "+1212555"}]}), 422, "validation_failed")
    assert body["details"]["contacts"][0]["row"] == 1 and "item 1" in body["message"]
    assert admin.get(path).get_json()["items"] == []
    assert admin.post(path, json={"contacts": [{"phone_number": "+12125550101", "time_zone": "Asia/Tokyo"}]}
                      ).get_json()["items"][0]["time_zones"] == ["Asia/Tokyo"]
    body = assert_error(admin.post(path, json={"contacts": [{"phone_number": "12125550101"}]}), 422, "validation_failed")
    assert "already a contact" in body["message"]
    body = assert_error(admin.post(path, json={"contacts": [{"phone_number": "+882123456789"}]}), 422,
                        "validation_failed")
    assert body["details"]["contacts"][0]["field"] == "time_zone"


def test_given_a_contact_when_a_disposition_is_recorded_then_it_is_on_the_contact(api, seed):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts"
    contact = admin.post(path, json={"contacts": [{"phone_number": "+12125550101"}]}).get_json()["items"][0]
    saved = admin.put(f"{path}/{contact['id']}/disposition", json={"disposition": "sale", "note": "2 seats"})
    assert saved.status_code == 200, saved.get_json()
    assert (saved.get_json()["disposition"], saved.get_json()["disposition_note"]) == ("sale", "2 seats")
    assert saved.get_json()["disposed_at"] is not None
    assert_error(admin.put(f"{path}/{contact['id']}/disposition", json={"disposition": "no way!"}), 422,
                 "validation_failed")


# --- do-not-call -------------------------------------------------------------------------------

def test_given_do_not_call_numbers_as_json_and_csv_when_added_then_listed_once_each_and_removable(api, seed):
    _, admin = admin_client(api, seed)
    assert admin.post("/api/do-not-call", json={"numbers": [{"number": "+12125550101", "reason": "asked"}]}
                      ).get_json() == {"added": 1}
    response = _upload(admin, "/api/do-not-call/import", "dnc_good.csv")
    assert response.status_code == 201, response.get_json()
    assert response.get_json() == {"added": 1}  # 12125550101 was listed already, twice in the file
    numbers = sorted(e["number"] for e in admin.get("/api/do-not-call").get_json()["items"])
    assert numbers == ["12125550101", "4930123456"]
    assert admin.delete("/api/do-not-call/+4930123456").status_code == 204
    assert_error(admin.delete("/api/do-not-call/4930123456"), 404, "dnc_number_not_found")


def test_given_a_do_not_call_csv_with_a_bad_row_when_uploaded_then_422_row_3_and_nothing_listed(api, seed):
    _, admin = admin_client(api, seed)
    body = assert_error(_upload(admin, "/api/do-not-call/import", "dnc_bad_row.csv"), 422, "validation_failed")
    assert body["details"]["rows"][0]["row"] == 3
    assert admin.get("/api/do-not-call").get_json()["items"] == []


def test_given_another_tenants_do_not_call_list_when_read_then_invisible(api, seed, app_role_conn):
    _, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    admin_a.post("/api/do-not-call", json={"numbers": [{"number": "+12125550101"}]})
    assert admin_b.get("/api/do-not-call").get_json()["items"] == []
    assert_error(admin_b.delete("/api/do-not-call/12125550101"), 404, "dnc_number_not_found")
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM do_not_call")).scalar() == 0
