"""Preview mode (app/campaigns/preview.py) through the real dialer loop on PostgreSQL and Redis,
with an injected clock: a free agent of the campaign is claimed and offered one contact (name,
number, attributes) — no call yet; the agent's accept makes the next round dial that contact
for that agent (the call id the claim holds), its skip returns the contact to the pool (counted)
and the next contact is offered, and an offer nobody answers within
``CAMPAIGN_PREVIEW_OFFER_SECONDS`` is withdrawn, the contact returned and the agent released."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app import limits
from app.campaigns.preview import ACCEPTED, SKIPPED, PreviewOffers
from app.models import CallRecord, Campaign, CampaignContact
from tests.campaigns.test_dialer import NOON_NEW_YORK, NUMBERS, Floor, make_floor

TIMEOUT = timedelta(seconds=limits.CAMPAIGN_PREVIEW_OFFER_SECONDS)


def preview_floor(seed, owner_engine, redis_client, *, agents: int = 1) -> Floor:
    floor = make_floor(seed, owner_engine, redis_client, agents=agents)
    with Session(owner_engine) as db, db.begin():
        db.get_one(Campaign, floor.campaign_id).dialer_mode = "preview"
        first = db.get_one(CampaignContact, floor.contacts[NUMBERS[0]])
        first.name, first.attributes = "Ada Lovelace", {"plan": "gold", "renewal": "2026-12-01"}
    return floor


def offers_of(floor: Floor) -> PreviewOffers:
    return PreviewOffers(floor.presence.redis, floor.presence.prefix)


def counts(floor: Floor) -> dict:
    with floor.engine.connect() as conn:
        return conn.execute(text("SELECT outcome_counts FROM campaigns WHERE id = :i"),
                            {"i": floor.campaign_id}).scalar_one()


@pytest.fixture
def floor(seed, owner_engine, redis_client) -> Floor:
    return preview_floor(seed, owner_engine, redis_client)


def test_given_a_free_agent_when_a_preview_round_runs_then_the_agent_is_offered_the_contact_and_nothing_is_dialled(floor):
    dialer = floor.dialer()

    assert floor.mine(dialer.tick(NOON_NEW_YORK)) == []

    (offer,) = floor.outbox("agent.preview.offer")
    assert offer["agentId"] == str(floor.agents[0].id)
    assert offer["campaignId"] == str(floor.campaign_id)
    assert offer["timeoutSeconds"] == limits.CAMPAIGN_PREVIEW_OFFER_SECONDS
    assert offer["contact"] == {"id": str(floor.contacts[NUMBERS[0]]), "name": "Ada Lovelace",
                                "phoneNumber": "+" + NUMBERS[0], "attempts": 1,
                                "attributes": {"plan": "gold", "renewal": "2026-12-01"}}
    assert floor.originates() == []
    # the agent is held for the offer (no queue call, no second offer), the contact is in flight
    assert floor.idle() == set()
    assert floor.presence.engaged_by(str(floor.account_id), str(floor.agents[0].id)) == offer["callId"]
    assert (floor.contact(NUMBERS[0]).status, floor.contact(NUMBERS[0]).attempts) == ("in_progress", 1)
    assert floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=1))) == []
    assert len(floor.outbox("agent.preview.offer")) == 1


def test_given_an_offer_when_the_agent_accepts_then_the_contact_is_dialled_for_that_agent_and_its_record_names_the_campaign(
        floor):
    dialer = floor.dialer()
    dialer.tick(NOON_NEW_YORK)
    (offer,) = floor.outbox("agent.preview.offer")

    accepted = offers_of(floor).answer(str(floor.account_id), offer["agentId"], offer["offerId"], ACCEPTED)
    assert accepted is not None and accepted.call_id == offer["callId"]
    (call,) = floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=1)))

    assert (str(call.call_id), call.contact_id, call.agent_id) == (
        offer["callId"], floor.contacts[NUMBERS[0]], floor.agents[0].id)
    (originate,) = floor.originates()
    assert (originate["callId"], originate["phoneNumber"], originate["agentId"], originate["queueId"]) == (
        offer["callId"], NUMBERS[0], str(floor.agents[0].id), str(floor.queue_id))
    # the controller's record of the call, then its call.ended: the outcome is applied and the
    # record is stamped with the campaign and the contact
    with Session(floor.engine) as db, db.begin():
        db.add(CallRecord(account_id=floor.account_id, trace_id=uuid.uuid4(), call_id=call.call_id,
                          direction="outbound", started_at=NOON_NEW_YORK, status="completed"))
    assert floor.end(dialer, call.call_id, answeredAt="2026-11-25T17:00:09Z", talkMs=30_000) == "human"
    with Session(floor.engine) as db:
        record = db.query(CallRecord).filter_by(call_id=call.call_id).one()
        assert (record.campaign_id, record.contact_id) == (floor.campaign_id, floor.contacts[NUMBERS[0]])
    assert floor.contact(NUMBERS[0]).status == "completed"
    assert counts(floor) == {"human": 1}
    # answered once: a second answer, or the same offer skipped, finds nothing
    assert offers_of(floor).answer(str(floor.account_id), offer["agentId"], offer["offerId"], SKIPPED) is None


def test_given_an_offer_when_the_agent_skips_then_the_contact_returns_counted_and_the_next_contact_is_offered(floor):
    dialer = floor.dialer()
    dialer.tick(NOON_NEW_YORK)
    (first,) = floor.outbox("agent.preview.offer")

    assert offers_of(floor).answer(str(floor.account_id), first["agentId"], first["offerId"], SKIPPED) is not None
    assert floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=1))) == []

    skipped = floor.contact(NUMBERS[0])
    assert (skipped.status, skipped.attempts, skipped.skips) == ("pending", 0, 1)
    assert counts(floor) == {"skipped": 1}
    assert floor.originates() == []
    # released and offered again at once: the next contact never tried, not the skipped one
    second = floor.outbox("agent.preview.offer")[1]
    assert second["contact"]["id"] == str(floor.contacts[NUMBERS[1]])
    assert second["agentId"] == first["agentId"] and second["callId"] != first["callId"]


def test_given_an_offer_nobody_answers_when_the_timeout_passes_then_withdrawn_the_contact_returns_and_the_agent_is_released(
        floor):
    dialer = floor.dialer()
    dialer.tick(NOON_NEW_YORK)
    (offer,) = floor.outbox("agent.preview.offer")

    dialer.tick(NOON_NEW_YORK + TIMEOUT - timedelta(seconds=1))
    assert floor.outbox("agent.preview.withdrawn") == []
    dialer.tick(NOON_NEW_YORK + TIMEOUT)

    assert [(w["offerId"], w["agentId"], w["reason"]) for w in floor.outbox("agent.preview.withdrawn")] == [
        (offer["offerId"], offer["agentId"], "timeout")]
    returned = floor.contact(NUMBERS[0])
    assert (returned.status, returned.attempts, returned.skips) == ("pending", 0, 0)
    assert counts(floor) == {}
    # too late to accept; the agent was released (and, free, offered the next contact)
    assert offers_of(floor).answer(str(floor.account_id), offer["agentId"], offer["offerId"], ACCEPTED) is None
    assert floor.originates() == []
    assert [o["contact"]["id"] for o in floor.outbox("agent.preview.offer")[1:]] == [str(floor.contacts[NUMBERS[1]])]


def test_given_an_offer_when_another_agent_answers_it_then_it_is_refused(seed, owner_engine, redis_client):
    floor = preview_floor(seed, owner_engine, redis_client, agents=2)
    floor.dialer().tick(NOON_NEW_YORK)
    first, second = floor.outbox("agent.preview.offer")

    assert offers_of(floor).answer(str(floor.account_id), second["agentId"], first["offerId"], ACCEPTED) is None
    assert offers_of(floor).answer(str(uuid.uuid4()), first["agentId"], first["offerId"], ACCEPTED) is None
    assert offers_of(floor).answer(str(floor.account_id), first["agentId"], first["offerId"], ACCEPTED) is not None


def test_given_an_accepted_offer_when_the_campaign_was_paused_meanwhile_then_no_call_and_the_contact_returns(floor):
    dialer = floor.dialer()
    dialer.tick(NOON_NEW_YORK)
    (offer,) = floor.outbox("agent.preview.offer")
    offers_of(floor).answer(str(floor.account_id), offer["agentId"], offer["offerId"], ACCEPTED)
    with Session(floor.engine) as db, db.begin():
        db.get_one(Campaign, floor.campaign_id).status = "paused"

    assert floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=1))) == []

    assert floor.originates() == []
    assert [w["reason"] for w in floor.outbox("agent.preview.withdrawn")] == ["campaign_not_running"]
    assert (floor.contact(NUMBERS[0]).status, floor.contact(NUMBERS[0]).attempts) == ("pending", 0)
    assert str(floor.agents[0].id) in floor.idle()
