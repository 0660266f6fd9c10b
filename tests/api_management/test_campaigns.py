"""/api/campaigns and contacts: caller ID ownership, trunk and agent-group references, isolation."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from tests.api_management.helpers import admin_client, assert_error, cases
from tests.plugins.database import set_tenant, unique_number


def _setup(admin) -> dict:
    number = admin.post("/api/phone-numbers", json={"number": unique_number()}).get_json()["number"]
    carrier = admin.post("/api/carriers", json={"name": "trunk"}).get_json()["id"]
    queue = admin.post("/api/queues", json={"name": "outbound-team"}).get_json()["id"]
    return {"name": "Renewals", "dialer_mode": "progressive", "caller_id": "+" + number,
            "carrier_id": carrier, "agent_group_ids": [queue]}


def test_given_owned_caller_id_trunk_and_queue_when_creating_a_campaign_then_201_as_draft(api, seed):
    _, admin = admin_client(api, seed)
    body = _setup(admin)
    created = admin.post("/api/campaigns", json=body)
    assert created.status_code == 201, created.get_json()
    campaign = created.get_json()
    assert campaign["status"] == "draft" and campaign["dialer_mode"] == "progressive"
    assert campaign["caller_id"] == body["caller_id"].lstrip("+")
    assert campaign["carrier_id"] == body["carrier_id"] and campaign["agent_group_ids"] == body["agent_group_ids"]
    assert admin.get(f"/api/campaigns/{campaign['id']}").get_json() == campaign
    assert admin.patch(f"/api/campaigns/{campaign['id']}", json={"status": "archived"}).get_json()["status"] == "archived"


@pytest.mark.parametrize("case", cases("campaigns_bad.json"))
def test_given_an_invalid_campaign_when_saved_then_422_names_the_field(api, seed, case):
    _, admin = admin_client(api, seed)
    body = assert_error(admin.post("/api/campaigns", json=case["body"]), 422, case["code"])
    assert case["field"] in json.dumps(body["details"])


def test_given_a_safe_harbour_recording_when_saved_then_shown_and_the_text_must_be_cleared_to_say_one_instead(api, seed):
    _, admin = admin_client(api, seed)
    created = admin.post("/api/campaigns", json={"name": "c", "dialer_mode": "power", "power_ratio": 3}).get_json()
    assert (created["safe_harbour_text"], created["safe_harbour_url"], created["power_ratio"]) == (None, None, 3.0)
    path = f"/api/campaigns/{created['id']}"
    url = "https://media.example.com/sorry.wav"
    assert admin.patch(path, json={"safe_harbour_url": url}).get_json()["safe_harbour_url"] == url
    assert_error(admin.patch(path, json={"safe_harbour_text": "Sorry."}), 422, "validation_failed")
    saying = admin.patch(path, json={"safe_harbour_text": "Sorry.", "safe_harbour_url": None}).get_json()
    assert (saying["safe_harbour_text"], saying["safe_harbour_url"]) == ("Sorry.", None)


def test_given_another_tenants_number_as_caller_id_when_saved_then_422_caller_id_not_owned(api, seed):
    _, admin_a = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    theirs = admin_b.post("/api/phone-numbers", json={"number": unique_number()}).get_json()["number"]
    assert_error(admin_a.post("/api/campaigns", json={"name": "c", "caller_id": theirs}), 422, "caller_id_not_owned")
    campaign = admin_a.post("/api/campaigns", json={"name": "c"}).get_json()
    assert_error(admin_a.patch(f"/api/campaigns/{campaign['id']}", json={"caller_id": theirs}), 422, "caller_id_not_owned")


def test_given_contacts_when_added_then_listed_with_cursor_and_status_filter(api, seed):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts"
    added = admin.post(path, json={"contacts": [{"phone_number": f"+1555000{i:04d}", "name": f"n{i}",
                                                 "attributes": {"tier": "gold"}} for i in range(5)]})
    assert added.status_code == 201, added.get_json()
    assert added.get_json()["created"] == 5
    first = admin.get(path + "?limit=3").get_json()
    second = admin.get(path + f"?limit=3&cursor={first['next_cursor']}").get_json()
    numbers = [c["phone_number"] for c in first["items"] + second["items"]]
    assert sorted(numbers) == [f"1555000{i:04d}" for i in range(5)] and second["next_cursor"] is None
    assert all(c["status"] == "pending" and c["attempts"] == 0 for c in first["items"])
    assert admin.get(path + "?status=completed").get_json()["items"] == []
    contact_id = first["items"][0]["id"]
    assert admin.delete(f"{path}/{contact_id}").status_code == 204
    assert_error(admin.delete(f"{path}/{contact_id}"), 404, "campaign_contact_not_found")


@pytest.mark.parametrize("case", cases("campaign_contacts_bad.json"))
def test_given_invalid_contacts_when_added_then_422_and_none_are_saved(api, seed, case):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts"
    body = assert_error(admin.post(path, json=case["body"]), 422, "validation_failed")
    assert case["field"] in json.dumps(body["details"])
    assert admin.get(path).get_json()["items"] == []


def test_given_another_tenants_campaign_when_accessed_then_404(api, seed, app_role_conn):
    _, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    campaign = admin_a.post("/api/campaigns", json={"name": "secret"}).get_json()
    admin_a.post(f"/api/campaigns/{campaign['id']}/contacts", json={"contacts": [{"phone_number": "15550100"}]})
    for response in (admin_b.get(f"/api/campaigns/{campaign['id']}"),
                     admin_b.patch(f"/api/campaigns/{campaign['id']}", json={"name": "x"}),
                     admin_b.delete(f"/api/campaigns/{campaign['id']}"),
                     admin_b.get(f"/api/campaigns/{campaign['id']}/contacts"),
                     admin_b.post(f"/api/campaigns/{campaign['id']}/contacts", json={"contacts": [{"phone_number": "1"}]})):
        assert_error(response, 404, "campaign_not_found")
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM campaign_contacts WHERE campaign_id = :i"),
                                     {"i": campaign["id"]}).scalar() == 0


def test_given_amd_settings_when_saved_then_returned_and_message_mode_keeps_needing_its_message(api, seed):
    _, admin = admin_client(api, seed)
    assert admin.post("/api/campaigns", json={"name": "c"}).get_json()["amd"] == "off"  # the default
    message = {"verb": "say", "text": "Please call Acme back on 555 0100."}
    created = admin.post("/api/campaigns", json={"name": "c", "amd": "message", "amd_message": message})
    assert created.status_code == 201, created.get_json()
    campaign = created.get_json()
    assert (campaign["amd"], campaign["amd_message"]) == ("message", message)
    path = f"/api/campaigns/{campaign['id']}"
    # the stored message counts for a PATCH that changes only the mode, and a mode change keeps it
    assert admin.patch(path, json={"amd": "hangup"}).get_json()["amd_message"] == message
    assert admin.patch(path, json={"amd": "message"}).get_json()["amd"] == "message"
    assert_error(admin.patch(path, json={"amd_message": None}), 422, "amd_message_required")
    played = {"verb": "play", "url": "https://media.example.com/voicemail-drop.wav"}
    assert admin.patch(path, json={"amd_message": played}).get_json()["amd_message"] == played
    other = admin.post("/api/campaigns", json={"name": "d"}).get_json()
    assert_error(admin.patch(f"/api/campaigns/{other['id']}", json={"amd": "message"}), 422, "amd_message_required")


def _zone_at(local_hour: int) -> str:
    """An Etc/GMT zone whose local time is within the hour after ``local_hour``:00 now."""
    from datetime import datetime, timezone
    offset = (local_hour - datetime.now(timezone.utc).hour) % 24
    offset = offset - 24 if offset > 14 else offset
    return f"Etc/GMT{-offset:+d}" if offset else "Etc/GMT"


def test_given_a_contact_whose_window_is_closed_now_when_listed_then_it_shows_it_waits_for_the_calling_window(
        api, seed):
    _, admin = admin_client(api, seed)
    campaign = admin.post("/api/campaigns", json={"name": "c"}).get_json()
    path = f"/api/campaigns/{campaign['id']}/contacts"
    added = admin.post(path, json={"contacts": [{"phone_number": "+15550000001", "time_zone": _zone_at(12)},
                                                {"phone_number": "+15550000002", "time_zone": _zone_at(0)}]})
    assert [c["waiting_for"] for c in added.get_json()["items"]] == [None, "calling_window"]
    listed = {c["phone_number"]: c["waiting_for"] for c in admin.get(path).get_json()["items"]}
    assert listed == {"15550000001": None, "15550000002": "calling_window"}
