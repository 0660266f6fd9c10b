"""Contacts at dial time (app/campaigns/picking.py) on real PostgreSQL under the tenant role
(RLS): the do-not-call list and the calling window are checked when the contact is picked, with
an injected clock; retries follow the campaign's rules and queue campaign.attempt; two pickers
at once never take the same contact."""
from __future__ import annotations

import uuid
from datetime import datetime, time, timedelta, timezone

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.campaigns import picking
from app.db.engine import tenant_session
from app.models import Campaign, CampaignContact, DoNotCall

UTC = timezone.utc
# Wednesday 2026-11-25, 17:00 UTC = 12:00 in New York, 18:00 in Paris, 02:00 (Thursday) in Tokyo
NOON_NEW_YORK = datetime(2026, 11, 25, 17, 0, tzinfo=UTC)
NEW_YORK, TOKYO = "America/New_York", "Asia/Tokyo"


class Setup:
    def __init__(self, seed, owner_engine) -> None:
        self.account = seed.tenant().account_id
        self.engine = owner_engine
        self.campaign_id = uuid.uuid4()
        with Session(owner_engine) as db, db.begin():
            db.add(Campaign(id=self.campaign_id, account_id=self.account, name="c", status="running",
                            dialer_mode="progressive", window_start=time(8), window_end=time(21),
                            allowed_weekdays=[1, 2, 3, 4, 5, 6, 7], retry_policy={}))

    def contacts(self, *zones_by_number: tuple[str, str]) -> dict[str, uuid.UUID]:
        ids = {}
        with Session(self.engine) as db, db.begin():
            for number, zone in zones_by_number:
                ids[number] = uuid.uuid4()
                db.add(CampaignContact(id=ids[number], account_id=self.account, campaign_id=self.campaign_id,
                                       phone_number=number, time_zones=[zone]))
                db.flush()
        return ids

    def pick(self, now: datetime, limit: int) -> list[str]:
        with tenant_session(self.account) as db:
            return [p.phone_number for p in picking.pick(db, db.get(Campaign, self.campaign_id), now, limit)]

    def outcome(self, contact_id: uuid.UUID, outcome: str, now: datetime) -> str:
        with tenant_session(self.account) as db:
            return picking.record_outcome(db, db.get(Campaign, self.campaign_id), contact_id, outcome, now)

    @property
    def campaign(self) -> Campaign:
        with Session(self.engine, expire_on_commit=False) as db:
            return db.get_one(Campaign, self.campaign_id)

    def row(self, contact_id: uuid.UUID) -> CampaignContact:
        with Session(self.engine, expire_on_commit=False) as db:
            return db.get_one(CampaignContact, contact_id)


@pytest.fixture
def setup(seed, owner_engine) -> Setup:
    return Setup(seed, owner_engine)


def test_given_a_number_listed_after_import_when_picked_then_never_dialled_and_marked_do_not_call(setup):
    ids = setup.contacts(("12125550101", NEW_YORK), ("12125550102", NEW_YORK))
    with Session(setup.engine) as db, db.begin():
        db.add(DoNotCall(id=uuid.uuid4(), account_id=setup.account, number="12125550101"))
    assert setup.pick(NOON_NEW_YORK, 10) == ["12125550102"]
    assert setup.row(ids["12125550101"]).status == "do_not_call"
    assert setup.row(ids["12125550101"]).attempts == 0
    assert setup.pick(NOON_NEW_YORK, 10) == []


def test_given_contacts_in_two_zones_when_picked_at_noon_new_york_then_only_new_york_and_tokyo_waits_for_8am(setup):
    ids = setup.contacts(("12125550101", NEW_YORK), ("81312345678", TOKYO))
    assert setup.pick(NOON_NEW_YORK, 10) == ["12125550101"]
    tokyo = setup.row(ids["81312345678"])
    assert (tokyo.status, tokyo.attempts) == ("pending", 0)
    assert tokyo.next_attempt_at == datetime(2026, 11, 25, 23, 0, tzinfo=UTC)  # 08:00 Thursday in Tokyo
    assert setup.pick(datetime(2026, 11, 25, 22, 59, tzinfo=UTC), 10) == []
    assert setup.pick(datetime(2026, 11, 25, 23, 0, tzinfo=UTC), 10) == ["81312345678"]


def test_given_pending_contacts_when_asked_what_they_wait_for_then_the_window_a_retry_or_nothing(setup):
    ids = setup.contacts(("12125550101", NEW_YORK), ("81312345678", TOKYO), ("12125550102", NEW_YORK))
    setup.pick(NOON_NEW_YORK, 1)  # New York's first is dialled, Tokyo put off to its 08:00
    setup.outcome(ids["12125550101"], "busy", NOON_NEW_YORK)  # retried 10 min later
    window = picking.window_of(setup.campaign)
    waiting = {n: picking.waiting_for(setup.row(i), window, NOON_NEW_YORK) for n, i in ids.items()}
    assert waiting == {"12125550101": "retry", "81312345678": "calling_window", "12125550102": None}
    later = NOON_NEW_YORK + timedelta(minutes=10)
    assert picking.waiting_for(setup.row(ids["12125550101"]), window, later) is None
    with Session(setup.engine) as db, db.begin():
        db.get_one(CampaignContact, ids["12125550102"]).status = "do_not_call"
    assert picking.waiting_for(setup.row(ids["12125550102"]), window, NOON_NEW_YORK) is None


def test_given_a_paused_campaign_when_picking_then_nothing_is_dialled(setup):
    setup.contacts(("12125550101", NEW_YORK))
    with Session(setup.engine) as db, db.begin():
        db.get_one(Campaign, setup.campaign_id).status = "paused"
    assert setup.pick(NOON_NEW_YORK, 10) == []


def test_given_a_busy_attempt_when_recorded_then_retried_after_the_delay_until_max_attempts_then_failed(setup):
    contact = setup.contacts(("12125550101", NEW_YORK))["12125550101"]
    now = NOON_NEW_YORK
    for attempt in (1, 2, 3):
        assert setup.pick(now, 1) == ["12125550101"]
        status = setup.outcome(contact, "busy", now)
        row = setup.row(contact)
        assert (row.attempts, row.last_result) == (attempt, "busy")
        if attempt < 3:
            assert (status, row.next_attempt_at) == ("pending", now + timedelta(seconds=600))
            assert setup.pick(now + timedelta(seconds=599), 1) == []
            now += timedelta(seconds=600)
    assert status == "failed" and setup.pick(now + timedelta(days=1), 1) == []
    with setup.engine.connect() as conn:
        payloads = conn.execute(text(
            "SELECT body->'payload' FROM event_outbox WHERE routing_key = 'campaign.attempt' "
            "AND body->>'account' = :a ORDER BY created_at"), {"a": str(setup.account)}).scalars().all()
    assert [(p["attempt"], p["outcome"], p["contactStatus"]) for p in payloads] == [
        (1, "busy", "pending"), (2, "busy", "pending"), (3, "busy", "failed")]


def test_given_a_human_answer_when_recorded_then_the_contact_is_completed(setup):
    contact = setup.contacts(("12125550101", NEW_YORK))["12125550101"]
    setup.pick(NOON_NEW_YORK, 1)
    assert setup.outcome(contact, "human", NOON_NEW_YORK) == "completed"
    assert setup.row(contact).next_attempt_at is None


def test_given_two_pickers_at_once_when_both_pick_then_no_contact_is_taken_twice(setup):
    numbers = [f"1212555{n:04d}" for n in range(20)]
    setup.contacts(*[(n, NEW_YORK) for n in numbers])
    campaign_id = setup.campaign_id
    with tenant_session(setup.account) as first, tenant_session(setup.account) as second:
        taken_first = picking.pick(first, first.get(Campaign, campaign_id), NOON_NEW_YORK, 8)
        # the first transaction holds its rows: the second skips them instead of waiting
        taken_second = picking.pick(second, second.get(Campaign, campaign_id), NOON_NEW_YORK, 8)
    after = setup.pick(NOON_NEW_YORK, 20)
    all_taken = [p.phone_number for p in taken_first + taken_second] + after
    assert len(taken_first) == 8 and len(taken_second) == 8 and len(after) == 4
    assert sorted(all_taken) == numbers
    with Session(setup.engine) as db:
        attempts = db.scalars(select(CampaignContact.attempts).where(CampaignContact.campaign_id == campaign_id))
        assert set(attempts) == {1}


def test_given_an_attempt_with_a_detection_report_when_recorded_then_its_call_record_and_contact_carry_the_verdict(
        setup):
    contact = setup.contacts(("12125550101", NEW_YORK))["12125550101"]
    call_id = uuid.uuid4()
    with setup.engine.begin() as conn:
        conn.execute(text("INSERT INTO call_records (account_id, trace_id, call_id, direction, from_number, "
                          "to_number, started_at, status) VALUES (:a, gen_random_uuid(), :c, 'outbound', '1', "
                          "'12125550101', now(), 'completed')"), {"a": str(setup.account), "c": str(call_id)})
    setup.pick(NOON_NEW_YORK, 1)
    with tenant_session(setup.account) as db:
        picking.record_outcome(db, db.get(Campaign, setup.campaign_id), contact, "machine", NOON_NEW_YORK,
                               amd={"result": "machine", "action": "hangup"}, call_id=call_id)
    assert setup.row(contact).last_amd_result == "machine"
    with setup.engine.connect() as conn:
        assert conn.execute(text("SELECT amd_result FROM call_records WHERE call_id = :c"),
                            {"c": str(call_id)}).scalar_one() == "machine"
    setup.pick(NOON_NEW_YORK + timedelta(hours=4), 1)  # the machine rule's retry; no detection this time
    setup.outcome(contact, "busy", NOON_NEW_YORK + timedelta(hours=4))
    assert setup.row(contact).last_amd_result is None
