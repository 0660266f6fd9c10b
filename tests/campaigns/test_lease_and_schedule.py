"""The dialer's building blocks across instances: the Redis lease on a running campaign (one
holder; taken over once a dead holder's lease expires; never extended or released by a former
holder) and the sweep that begins due scheduled campaigns and finishes exhausted ones, with an
injected clock, on real PostgreSQL."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.campaigns import schedule
from app.campaigns.lease import CampaignLeases
from app.db.engine import platform_session
from app.models import Campaign, CampaignContact
from tests.plugins.eventually import eventually

TTL = 0.5


@pytest.fixture
def pair(redis_client, redis_prefix) -> tuple[CampaignLeases, CampaignLeases]:
    return (CampaignLeases(redis_client, redis_prefix, "dialer-a", ttl_seconds=TTL),
            CampaignLeases(redis_client, redis_prefix, "dialer-b", ttl_seconds=TTL))


def test_given_a_held_lease_when_another_instance_tries_then_refused_until_the_holder_dies(pair):
    a, b = pair
    campaign = uuid.uuid4()
    assert a.acquire(campaign) and not b.acquire(campaign) and a.acquire(campaign)
    assert a.holder_of(campaign) == "dialer-a"
    # dialer-a dies: it renews no more; dialer-b keeps trying as its loop would
    taken = eventually(lambda: b.acquire(campaign), timeout=TTL * 6, what="dialer-b takes the lease over")
    assert taken and b.holder_of(campaign) == "dialer-b"
    assert a.renew(campaign) is False  # the old holder learns it lost it and stops pacing
    a.release(campaign)
    assert b.holder_of(campaign) == "dialer-b"  # a former holder cannot release someone else's lease
    b.release(campaign)
    assert b.holder_of(campaign) is None and a.acquire(campaign)


def test_given_a_renewing_holder_when_longer_than_the_ttl_passes_then_it_keeps_the_lease(pair, redis_client):
    a, b = pair
    campaign = uuid.uuid4()
    assert a.acquire(campaign)
    ttl_before = redis_client.pttl(a.key(campaign))
    assert a.renew(campaign) and redis_client.pttl(a.key(campaign)) >= ttl_before - 50
    assert 0 < redis_client.pttl(a.key(campaign)) <= TTL * 1000
    assert not b.acquire(campaign)


NOW = datetime(2026, 11, 25, 17, 0, tzinfo=timezone.utc)


def _campaign(owner_engine, account, status: str, *, scheduled_at=None, contacts: tuple[str, ...] = ()) -> uuid.UUID:
    campaign_id = uuid.uuid4()
    with Session(owner_engine) as db, db.begin():
        db.add(Campaign(id=campaign_id, account_id=account, name="c", status=status, scheduled_at=scheduled_at))
        db.flush()
        for n, status_of_contact in enumerate(contacts):
            db.add(CampaignContact(id=uuid.uuid4(), account_id=account, campaign_id=campaign_id,
                                   phone_number=f"1212555{n:04d}", status=status_of_contact))
    return campaign_id


def _status(owner_engine, campaign_id) -> str:
    with owner_engine.connect() as conn:
        return conn.execute(text("SELECT status FROM campaigns WHERE id = :i"), {"i": campaign_id}).scalar_one()


def test_given_scheduled_and_running_campaigns_when_swept_then_due_ones_begin_and_exhausted_ones_finish(
        seed, owner_engine):
    account = seed.tenant().account_id
    due = _campaign(owner_engine, account, "scheduled", scheduled_at=NOW - timedelta(seconds=1), contacts=("pending",))
    later = _campaign(owner_engine, account, "scheduled", scheduled_at=NOW + timedelta(minutes=5))
    exhausted = _campaign(owner_engine, account, "running", contacts=("completed", "failed", "do_not_call"))
    in_flight = _campaign(owner_engine, account, "running", contacts=("completed", "in_progress"))
    retrying = _campaign(owner_engine, account, "running", contacts=("pending",))
    with platform_session() as db:
        moves = {(c.id, action) for c, action in schedule.advance(db, NOW)}
    assert {(due, "begin"), (exhausted, "finish")} <= moves
    assert not {c for c, _ in moves} & {later, in_flight, retrying}
    assert [_status(owner_engine, c) for c in (due, later, exhausted, in_flight, retrying)] == [
        "running", "scheduled", "completed", "running", "running"]
    with owner_engine.connect() as conn:
        announced = conn.execute(text(
            "SELECT body->'payload'->>'action', body->'payload'->>'to' FROM event_outbox "
            "WHERE routing_key = 'campaign.state_changed' AND body->>'account' = :a ORDER BY 1"),
            {"a": str(account)}).all()
    assert [tuple(r) for r in announced] == [("begin", "running"), ("finish", "completed")]
