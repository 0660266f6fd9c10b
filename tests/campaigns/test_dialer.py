"""The dialer loop (app/campaigns/dialer.py) on real PostgreSQL (tenant role, RLS, outbox) and
Redis, with an injected clock: a progressive campaign claims each free agent of its agent groups
before dialling one contact for it (``call.originate`` with the agent, the campaign's caller ID
and the campaign's ring time), stays within the account's concurrency limit and the calling
window, applies each call's outcome from ``call.ended`` with the retry rules (a busy contact is
dialled again after its rule's delay), finishes when no contact is left, and only the lease
holder dials — another instance takes over when the holder stops renewing."""
from __future__ import annotations

import time as clock
import uuid
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app import limits
from app.calls.limiter import ConcurrencyLimiter
from app.campaigns.dialer import CampaignDialer, outcome_of
from app.campaigns.lease import CampaignLeases
from app.contact.callbacks import call_ended as free_agent
from app.contact.presence import Presence
from app.models import Account, Agent, Campaign, CampaignContact, Queue
from app.settings import get_settings
from tests.plugins.agent_rows import add_agent
from tests.plugins.eventually import eventually

UTC = timezone.utc
# Wednesday 2026-11-25 17:00 UTC: noon in New York
NOON_NEW_YORK = datetime(2026, 11, 25, 17, 0, tzinfo=UTC)
NUMBERS = ("12125550101", "12125550102", "12125550103")
CALLER_ID = "12125550199"
LEASE_TTL = 0.5


@dataclass
class Floor:
    account_id: uuid.UUID
    campaign_id: uuid.UUID
    queue_id: uuid.UUID
    agents: list[Agent]
    contacts: dict[str, uuid.UUID]
    presence: Presence
    engine: object

    def dialer(self, holder: str = "dialer-a") -> CampaignDialer:
        leases = CampaignLeases(self.presence.redis, self.presence.prefix, holder, ttl_seconds=LEASE_TTL)
        return CampaignDialer(self.presence, leases, ConcurrencyLimiter(self.presence.redis),
                              clock=lambda: NOON_NEW_YORK)

    def mine(self, dialled: list) -> list:
        return [d for d in dialled if d.campaign_id == self.campaign_id]

    def outbox(self, routing_key: str) -> list[dict]:
        """Payloads of the account's outbox events of ``routing_key``, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT body FROM event_outbox WHERE routing_key = :k "
                "AND body->>'account' = :a ORDER BY created_at"),
                {"k": routing_key, "a": str(self.account_id)}).scalars()
            return [body["payload"] for body in rows]

    def originates(self) -> list[dict]:
        return self.outbox("call.originate")

    def contact(self, number: str) -> CampaignContact:
        with Session(self.engine, expire_on_commit=False) as db:
            return db.get_one(CampaignContact, self.contacts[number])

    def status(self) -> str:
        with self.engine.connect() as conn:
            return conn.execute(text("SELECT status FROM campaigns WHERE id = :i"),
                                {"i": self.campaign_id}).scalar_one()

    def idle(self) -> set[str]:
        return set(self.presence.idle_agents(str(self.account_id)))

    def end(self, dialer: CampaignDialer, call_id: uuid.UUID, **ended) -> str | None:
        """What follows the controller's call.ended: the outcome on the contact, the agent freed."""
        outcome = dialer.call_ended({"callId": str(call_id), **ended})
        free_agent(self.account_id, str(call_id), answered=bool(ended.get("answeredAt")), queue_id=None,
                   presence=self.presence)
        return outcome


def make_floor(seed, owner_engine, redis_client, *, agents: int, numbers=NUMBERS,
               max_calls: int = 0) -> Floor:
    tenant = seed.tenant()
    account = tenant.account_id
    queue_id, campaign_id = uuid.uuid4(), uuid.uuid4()
    contacts = {number: uuid.uuid4() for number in numbers}
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        db.get_one(Account, account).max_concurrent_calls = max_calls
        db.add(Queue(id=queue_id, account_id=account, name="outbound", wrap_up_seconds=0))
        db.flush()
        rows = [add_agent(db, account, [queue_id], f"dialagent{n}") for n in range(agents)]
        db.add(Campaign(id=campaign_id, account_id=account, name="renewals", status="running",
                        dialer_mode="progressive", caller_id=CALLER_ID, agent_group_ids=[queue_id],
                        window_start=time(8), window_end=time(21), allowed_weekdays=[1, 2, 3, 4, 5, 6, 7],
                        retry_policy={"busy": {"delay_seconds": 600, "max_attempts": 3}}))
    for number, contact_id in contacts.items():  # one transaction each: picked in this order (created_at)
        with Session(owner_engine) as db, db.begin():
            db.add(CampaignContact(id=contact_id, account_id=account, campaign_id=campaign_id,
                                   phone_number=number, time_zones=["America/New_York"]))
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    now_ms = int(clock.time() * 1000)
    for n, agent in enumerate(rows):
        presence.registered(tenant.subdomain, agent.sip_username, 600)
        presence.agent_idle(str(account), str(agent.id), since_ms=now_ms - 10_000 + n)
    return Floor(account, campaign_id, queue_id, rows, contacts, presence, owner_engine)


@pytest.fixture
def floor(seed, owner_engine, redis_client) -> Floor:
    return make_floor(seed, owner_engine, redis_client, agents=2)


def test_given_two_free_agents_and_three_contacts_when_a_progressive_round_runs_then_two_calls_each_with_its_reserved_agent(
        floor):
    dialer = floor.dialer()

    dialled = floor.mine(dialer.tick(NOON_NEW_YORK))

    assert [d.contact_id for d in dialled] == [floor.contacts[n] for n in NUMBERS[:2]]
    assert [d.agent_id for d in dialled] == [a.id for a in floor.agents]  # longest idle first
    payloads = floor.originates()
    assert [(p["phoneNumber"], p["agentId"], p["from"], p["queueId"], p["timeoutSeconds"]) for p in payloads] == [
        (NUMBERS[0], str(floor.agents[0].id), CALLER_ID, str(floor.queue_id), limits.CAMPAIGN_RING_TIMEOUT_SECONDS),
        (NUMBERS[1], str(floor.agents[1].id), CALLER_ID, str(floor.queue_id), limits.CAMPAIGN_RING_TIMEOUT_SECONDS)]
    assert [p["callId"] for p in payloads] == [str(d.call_id) for d in dialled]
    # both agents reserved for their calls, both contacts in flight with one attempt, the third waits
    assert floor.idle() == set()
    for d in dialled:
        assert floor.presence.engaged_by(str(floor.account_id), str(d.agent_id)) == str(d.call_id)
    assert [(floor.contact(n).status, floor.contact(n).attempts) for n in NUMBERS] == [
        ("in_progress", 1), ("in_progress", 1), ("pending", 0)]
    # no free agent, no call
    assert floor.mine(dialer.tick(NOON_NEW_YORK)) == []
    assert len(floor.originates()) == 2


def test_given_a_progressive_call_when_the_customer_answers_then_it_counts_as_talking_with_its_reserved_agent(
        floor):
    """No queue takes a progressive call (its leg dials the reserved agent at once), so no
    agent.accept comes: the answer itself puts it with its agent in the calls in flight."""
    dialer = floor.dialer()
    first, second = floor.mine(dialer.tick(NOON_NEW_YORK))

    dialer.call_answered({"callId": str(first.call_id)})

    calls = dialer.measures.in_flight(floor.campaign_id, NOON_NEW_YORK.timestamp() + 2)
    assert (len(calls.ringing), calls.screening, calls.connecting, len(calls.talking)) == (1, (), (), 1) and second


def test_given_a_busy_customer_when_the_call_ends_then_retried_after_the_rules_delay_and_an_answer_completes(
        seed, owner_engine, redis_client):
    floor = make_floor(seed, owner_engine, redis_client, agents=1, numbers=NUMBERS[:1])
    dialer = floor.dialer()
    (first,) = floor.mine(dialer.tick(NOON_NEW_YORK))

    assert floor.end(dialer, first.call_id, answeredAt=None, talkMs=0, hangupReason="busy") == "busy"
    contact = floor.contact(NUMBERS[0])
    assert (contact.status, contact.attempts, contact.last_result) == ("pending", 1, "busy")
    assert contact.next_attempt_at == NOON_NEW_YORK + timedelta(seconds=600)
    assert str(floor.agents[0].id) in floor.idle()  # the agent was given back
    # a redelivered call.ended changes nothing
    assert dialer.call_ended({"callId": str(first.call_id), "hangupReason": "busy"}) is None

    assert floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=599))) == []
    (second,) = floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=600)))
    assert second.contact_id == first.contact_id and second.call_id != first.call_id
    assert floor.end(dialer, second.call_id, answeredAt="2026-11-25T17:10:03Z", talkMs=42_000,
                     hangupReason=None) == "human"
    assert (floor.contact(NUMBERS[0]).status, floor.contact(NUMBERS[0]).attempts) == ("completed", 2)
    assert [(a["outcome"], a["attempt"], a["contactStatus"]) for a in floor.outbox("campaign.attempt")] == [
        ("busy", 1, "pending"), ("human", 2, "completed")]
    # nothing left to dial or in flight: the next round's sweep finishes the campaign
    dialer.tick(NOON_NEW_YORK + timedelta(seconds=601))
    assert floor.status() == "completed"


def test_given_an_account_limit_of_one_call_when_two_agents_are_free_then_one_call_and_the_other_agent_stays_idle(
        seed, owner_engine, redis_client):
    floor = make_floor(seed, owner_engine, redis_client, agents=2, max_calls=1)

    dialled = floor.mine(floor.dialer().tick(NOON_NEW_YORK))

    assert [d.agent_id for d in dialled] == [floor.agents[0].id]
    assert floor.idle() == {str(floor.agents[1].id)}


def test_given_the_calling_window_closed_when_a_round_runs_then_nothing_is_dialled_and_the_agents_stay_idle(floor):
    seven_am_new_york = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)

    assert floor.mine(floor.dialer().tick(seven_am_new_york)) == []

    assert floor.originates() == []
    assert floor.idle() == {str(a.id) for a in floor.agents}
    assert floor.contact(NUMBERS[0]).next_attempt_at == datetime(2026, 11, 25, 13, 0, tzinfo=UTC)  # 08:00 local


def test_given_two_dialer_instances_when_the_holder_stops_then_only_it_dials_and_the_other_takes_over(
        seed, owner_engine, redis_client):
    floor = make_floor(seed, owner_engine, redis_client, agents=1, numbers=NUMBERS[:2])
    a, b = floor.dialer("dialer-a"), floor.dialer("dialer-b")
    (first,) = floor.mine(a.tick(NOON_NEW_YORK))
    floor.end(a, first.call_id, answeredAt="2026-11-25T17:00:03Z", talkMs=5_000)

    assert floor.mine(b.tick(NOON_NEW_YORK)) == []  # the agent is free again, but b holds no lease
    # a dies (no more rounds): b takes the campaign over once a's lease lapses
    second = eventually(lambda: floor.mine(b.tick(NOON_NEW_YORK)), timeout=LEASE_TTL * 8,
                        what="dialer-b dials after dialer-a's lease lapsed")
    assert [d.contact_id for d in second] == [floor.contacts[NUMBERS[1]]]
    assert len(floor.originates()) == 2


@pytest.mark.parametrize(("ended", "outcome"), [
    ({"answeredAt": "2026-11-25T17:00:03Z", "talkMs": 1}, "human"),
    ({"answeredAt": "2026-11-25T17:00:03Z", "talkMs": 0}, "abandoned"),
    ({"answeredAt": None, "hangupReason": "busy"}, "busy"),
    ({"answeredAt": None, "hangupReason": "no_answer"}, "no_answer"),
    ({"answeredAt": None, "hangupReason": "no_route"}, "failed"),
    ({"answeredAt": None, "hangupReason": "concurrency_limit:account"}, "failed"),
])
def test_given_a_campaign_calls_end_when_classified_then_the_contacts_outcome(ended, outcome):
    assert outcome_of(ended) == outcome


def test_given_an_attempt_whose_call_ended_was_lost_when_it_is_stale_then_failed_and_its_agent_freed_but_a_live_one_is_kept(
        seed, owner_engine, redis_client):
    floor = make_floor(seed, owner_engine, redis_client, agents=2, numbers=NUMBERS[:2])
    dialer = floor.dialer()
    lost, live = floor.mine(dialer.tick(NOON_NEW_YORK))
    # the live call holds its concurrency slot (a controller refreshes it); the lost one never
    # reached a controller that lived: no slot, no call record, no call.ended
    dialer.limiter.acquire(str(live.call_id), floor.account_id, 0)
    stale_at = NOON_NEW_YORK + timedelta(seconds=limits.CAMPAIGN_ATTEMPT_STALE_SECONDS)

    assert dialer.recover_lost(floor.account_id, floor.campaign_id, stale_at) == {}
    assert dialer.recover_lost(floor.account_id, floor.campaign_id, stale_at + timedelta(seconds=1)) == {
        lost.contact_id: "failed"}

    by_id = {floor.contacts[n]: n for n in NUMBERS[:2]}
    assert (floor.contact(by_id[lost.contact_id]).status, floor.contact(by_id[lost.contact_id]).last_result) == (
        "pending", "failed")  # the default failed rule: again in 30 min, 2 attempts
    assert floor.contact(by_id[live.contact_id]).status == "in_progress"
    assert floor.idle() == {str(lost.agent_id)}
    # its late call.ended, should it come after all, changes nothing more
    assert dialer.call_ended({"callId": str(lost.call_id), "hangupReason": "busy"}) is None
    dialer.limiter.release(str(live.call_id))
