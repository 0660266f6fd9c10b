"""A campaign's visibility on the API, against real PostgreSQL and Redis: the live figures
(attempts per outcome, abandon rate against the cap, the agent groups' agents, contacts left),
the CSV export of contact outcomes (cells safe against formula injection, logged), the call
records' campaign and contact, and another tenant's campaign is 404 everywhere."""
from __future__ import annotations

import csv
import io
import time
import uuid
from datetime import datetime, timezone

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.campaigns.measures import SCREENING, TALKING, CampaignMeasures
from app.contact.presence import Presence
from app.models import Agent, Campaign, CampaignContact, Queue
from app.settings import get_settings
from tests.api_management.helpers import admin_client, assert_error, load
from tests.api_management.records_seed import insert_records
from tests.plugins.agent_rows import add_agent

AT = datetime(2026, 11, 25, 17, 0, tzinfo=timezone.utc)


def _campaign(owner_engine, account_id: uuid.UUID, **values) -> tuple[uuid.UUID, uuid.UUID]:
    campaign_id, queue_id = uuid.uuid4(), uuid.uuid4()
    with Session(owner_engine) as db, db.begin():
        db.add(Queue(id=queue_id, account_id=account_id, name=f"out-{queue_id.hex[:6]}"))
        db.flush()
        db.add(Campaign(id=campaign_id, account_id=account_id, name="renewals", status="running",
                        dialer_mode="preview", agent_group_ids=[queue_id], **values))
    return campaign_id, queue_id


def _contacts(owner_engine, account_id, campaign_id, rows: list[dict]) -> None:
    with Session(owner_engine) as db, db.begin():
        for n, row in enumerate(rows):
            db.add(CampaignContact(id=uuid.uuid4(), account_id=account_id, campaign_id=campaign_id,
                                   phone_number=f"1212555{n:04d}", time_zones=["America/New_York"], **row))
            db.flush()


def test_given_a_running_campaign_when_its_figures_are_read_then_attempts_rate_agents_and_contacts_left(
        api, seed, owner_engine, redis_client):
    tenant, admin = admin_client(api, seed)
    campaign_id, queue_id = _campaign(owner_engine, tenant.account_id, abandon_cap_percent=3.0, outcome_counts={
        "human": 30, "abandoned": 1, "busy": 2, "no_answer": 4, "machine": 3, "failed": 1, "skipped": 2})
    _contacts(owner_engine, tenant.account_id, campaign_id,
              [{"status": s} for s in ["pending"] * 3 + ["in_progress"] * 2 + ["completed"] * 30
               + ["failed", "do_not_call"]])
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        agents = [add_agent(db, tenant.account_id, [queue_id], f"fig{n}") for n in range(5)]
        db.get_one(Agent, agents[2].id).state = "wrap_up"
        db.get_one(Agent, agents[3].id).state = "not_ready"
        add_agent(db, tenant.account_id, [], "elsewhere")  # in no group of the campaign: not counted
    # agents[0] idle (waiting), agents[1] and agents[4] available but engaged (busy)
    Presence(redis_client, get_settings().redis_key_prefix).agent_idle(
        str(tenant.account_id), str(agents[0].id), since_ms=int(time.time() * 1000))
    # the calls in flight: three placed; one screened by AMD, one taken by an agent
    measures = CampaignMeasures(redis_client, get_settings().redis_key_prefix)
    measures.placed(campaign_id, ["c1", "c2", "c3"], time.time())
    measures.advance(campaign_id, "c2", SCREENING, time.time())
    measures.advance(campaign_id, "c3", TALKING, time.time())

    response = admin.get(f"/api/campaigns/{campaign_id}/figures")

    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {
        "campaign_id": str(campaign_id), "status": "running", "dialer_mode": "preview",
        "attempts": {"dialled": 41, "human": 30, "abandoned": 1, "busy": 2, "no_answer": 4, "machine": 3,
                     "failed": 1, "skipped": 2},
        "abandon_rate_percent": 3.23, "abandon_cap_percent": 3.0, "over_cap": True,  # 1 of 31 live answers
        "agents": {"total": 5, "waiting": 1, "busy": 2, "wrap_up": 1, "away": 1},
        "calls": {"ringing": 1, "screening": 1, "waiting": 0, "talking": 1},
        "contacts": {"total": 37, "pending": 3, "in_progress": 2, "completed": 30, "failed": 1, "do_not_call": 1,
                     "left": 5},
    }


def test_given_a_new_campaign_when_its_figures_are_read_then_zeros_and_no_rate(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    campaign_id, _ = _campaign(owner_engine, tenant.account_id)

    figures = admin.get(f"/api/campaigns/{campaign_id}/figures").get_json()

    assert figures["attempts"]["dialled"] == 0 and figures["abandon_rate_percent"] is None
    assert figures["over_cap"] is False and figures["contacts"]["left"] == 0 and figures["agents"]["total"] == 0


def test_given_contacts_with_formula_like_cells_when_exported_then_every_cell_is_neutralised_and_the_export_logged(
        api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    campaign_id, _ = _campaign(owner_engine, tenant.account_id)
    hostile = load("export_formula_cells.json")["neutralised"]
    _contacts(owner_engine, tenant.account_id, campaign_id, [
        {"name": raw, "attributes": {"note": raw}, "status": "failed", "attempts": 2, "last_result": "machine",
         "last_amd_result": "machine", "last_attempt_at": AT, "disposition": raw, "disposition_note": raw, "disposed_at": AT}
        for raw, _ in hostile])

    response = admin.get(f"/api/campaigns/{campaign_id}/contacts/export")

    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "attachment" in response.headers["Content-Disposition"]
    header, *rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert header == ["Contact ID", "Phone Number", "Name", "Status", "Attempts", "Skips", "Last Outcome",
                      "Last AMD Result", "Last Attempt", "Next Attempt", "Disposition", "Disposition Note", "Disposed At", "Created",
                      "Attributes"]
    assert len(rows) == len(hostile)
    for row in rows:
        cell = dict(zip(header, row))
        safe = hostile[int(cell["Phone Number"][-4:])][1]  # the contact of row n has number 1212555000n
        assert (cell["Name"], cell["Disposition"], cell["Disposition Note"]) == (safe, safe, safe)
        assert cell["Attributes"][0] not in "=+-@\t\r"
        assert (cell["Status"], cell["Attempts"], cell["Skips"], cell["Last Outcome"], cell["Last AMD Result"]) == (
            "failed", "2", "0", "machine", "machine")
        assert cell["Last Attempt"] == cell["Disposed At"] == "2026-11-25T17:00:00Z"
        assert cell["Phone Number"].startswith("+1212555")  # a plain number: the guard leaves it a number
    with owner_engine.connect() as conn:
        logged = conn.execute(text("SELECT action, row_count, filters FROM compliance_access_log "
                                   "WHERE account_id = :a AND action LIKE 'campaign_contacts.%'"),
                              {"a": str(tenant.account_id)}).all()
    assert [(a, n, f) for a, n, f in logged] == [
        ("campaign_contacts.export", len(hostile), {"campaign_id": str(campaign_id)})]


def test_given_a_campaign_call_when_records_are_listed_then_they_carry_the_campaign_and_contact_and_filter_on_it(
        api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    campaign_id, contact_id = uuid.uuid4(), uuid.uuid4()
    insert_records(owner_engine, tenant.account_id, 1, direction="outbound", campaign_id=campaign_id,
                   contact_id=contact_id, amd_result="human")
    insert_records(owner_engine, tenant.account_id, 2)

    (record,) = admin.get(f"/api/call-records?campaign_id={campaign_id}").get_json()["items"]

    assert (record["campaign_id"], record["contact_id"], record["amd_result"]) == (
        str(campaign_id), str(contact_id), "human")
    others = [r for r in admin.get("/api/call-records").get_json()["items"] if r["id"] != record["id"]]
    assert [(r["campaign_id"], r["contact_id"], r["amd_result"]) for r in others] == [(None, None, None)] * 2


def test_given_another_tenants_campaign_when_its_figures_or_export_are_asked_then_404(api, seed, owner_engine):
    tenant_a, _ = admin_client(api, seed)
    _, admin_b = admin_client(api, seed)
    campaign_id, _ = _campaign(owner_engine, tenant_a.account_id)
    _contacts(owner_engine, tenant_a.account_id, campaign_id, [{"name": "secret"}])

    assert_error(admin_b.get(f"/api/campaigns/{campaign_id}/figures"), 404, "campaign_not_found")
    refused = admin_b.get(f"/api/campaigns/{campaign_id}/contacts/export")
    assert_error(refused, 404, "campaign_not_found")
    assert b"secret" not in refused.get_data()
