"""Power and predictive rounds of the dialer (app/campaigns/overdial.py) on real PostgreSQL and
Redis with an injected clock: more lines than free agents, no agent reserved (the answer takes
the first free one through the queue's claim), the campaign's trunk and caller ID on every
``call.originate``, the calls in flight counted, and the abandon cap computed from real
outcomes (``call.ended``): above it, 1:1 at once."""
from __future__ import annotations

import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest
from sqlalchemy.orm import Session

from app import limits
from app.campaigns import overdial, pacing
from app.campaigns.safe_harbour import ABANDONED_REASON
from app.contact import states
from app.models import Agent, Campaign, Carrier, Queue
from tests.campaigns.test_dialer import CALLER_ID, NOON_NEW_YORK, Floor, make_floor

NUMBERS = tuple(f"1212555{n:04d}" for n in range(200, 212))
ANSWERED_AT = "2026-11-25T17:00:05Z"


def power_floor(seed, owner_engine, redis_client, *, agents: int, mode: str = "power", ratio: float = 2.0,
                cap_percent: float = 3.0) -> tuple[Floor, uuid.UUID]:
    floor = make_floor(seed, owner_engine, redis_client, agents=agents, numbers=NUMBERS)
    with Session(owner_engine) as db, db.begin():
        carrier = Carrier(account_id=floor.account_id, name="Campaign trunk")
        db.add(carrier)
        db.flush()
        campaign = db.get_one(Campaign, floor.campaign_id)
        campaign.dialer_mode, campaign.power_ratio, campaign.carrier_id = mode, ratio, carrier.id
        campaign.abandon_cap_percent = cap_percent
        carrier_id = carrier.id
    return floor, carrier_id


def test_given_power_2_to_1_with_three_free_agents_then_six_calls_none_reserving_an_agent(
        seed, owner_engine, redis_client):
    floor, carrier_id = power_floor(seed, owner_engine, redis_client, agents=3)
    dialer = floor.dialer()

    dialled = floor.mine(dialer.tick(NOON_NEW_YORK))

    assert len(dialled) == 6 and {d.agent_id for d in dialled} == {None}
    assert [d.contact_id for d in dialled] == [floor.contacts[n] for n in NUMBERS[:6]]
    payloads = floor.originates()
    assert [(p["phoneNumber"], p["agentId"], p["campaignId"], p["queueId"], p["carrierId"], p["from"])
            for p in payloads] == [(n, None, str(floor.campaign_id), str(floor.queue_id), str(carrier_id), CALLER_ID)
                                   for n in NUMBERS[:6]]
    # no agent is taken before an answer: all three stay idle for the first answers to claim
    assert floor.idle() == {str(a.id) for a in floor.agents}
    # six calls ringing for three agents: the next round places none
    assert floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=1))) == []


def test_given_power_calls_when_they_answer_and_end_then_ringing_lines_free_up_for_new_calls(
        seed, owner_engine, redis_client):
    floor, _ = power_floor(seed, owner_engine, redis_client, agents=1)
    dialer = floor.dialer()
    first, second = floor.mine(dialer.tick(NOON_NEW_YORK))

    dialer.call_answered({"callId": str(first.call_id)})
    # no detection on this campaign: the answer is a person waiting for an agent
    assert dialer.measures.in_flight(floor.campaign_id, NOON_NEW_YORK.timestamp() + 3) == ((3.0,), (), (3.0,), ())
    assert floor.end(dialer, second.call_id, answeredAt=None, talkMs=0, hangupReason="no_answer") == "no_answer"
    # nothing rings any more (one call answered, the other ended) and the agent is still idle
    # here (no queue claimed it yet), but the answered person is about to take it: 2 × 1 lines
    # less the one waiting
    again = floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=4)))
    assert [d.contact_id for d in again] == [floor.contacts[n] for n in NUMBERS[2:3]]


@pytest.mark.parametrize("cap_percent, lines_after", [(3.0, 4), (0.5, 2)])
def test_given_an_abandoned_answer_when_the_rate_is_above_the_cap_then_power_falls_back_to_1_to_1_at_once(
        seed, owner_engine, redis_client, cap_percent, lines_after):
    """One abandon is 1 % of the rate's floor of 100 answers: over a 0.5 % cap, under a 3 % one."""
    floor, _ = power_floor(seed, owner_engine, redis_client, agents=2, cap_percent=cap_percent)
    dialer = floor.dialer()
    calls = floor.mine(dialer.tick(NOON_NEW_YORK))
    assert len(calls) == 4

    # what the controller's call.ended says: the safe-harbour message ended the first (its 4 s
    # of answered time are billed, no agent took it); agents took the three others
    assert floor.end(dialer, calls[0].call_id, answeredAt=ANSWERED_AT, talkMs=4_000, ringMs=5_000,
                     agentId=None, hangupReason=ABANDONED_REASON) == "abandoned"
    for call in calls[1:]:
        assert floor.end(dialer, call.call_id, answeredAt=ANSWERED_AT, talkMs=30_000, ringMs=5_000,
                         agentId=str(floor.agents[0].id), hangupReason=None) == "human"

    stats = dialer.measures.stats(floor.campaign_id, cap_percent=cap_percent)
    assert stats.abandon_rate(NOON_NEW_YORK.timestamp()) == pytest.approx(1 / limits.CAMPAIGN_ABANDON_RATE_MIN_ANSWERS)
    assert (floor.contact(NUMBERS[0]).status, floor.contact(NUMBERS[0]).last_result) == ("pending", "abandoned")
    assert len(floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=10)))) == lines_after


def test_given_a_predictive_campaign_without_measurements_then_it_dials_1_to_1_while_warming_up(
        seed, owner_engine, redis_client):
    floor, _ = power_floor(seed, owner_engine, redis_client, agents=3, mode="predictive")

    assert len(floor.mine(floor.dialer().tick(NOON_NEW_YORK))) == 3

    assert {p["agentId"] for p in floor.originates()} == {None}


def test_given_a_power_call_answered_when_the_person_hangs_up_before_an_agent_took_it_then_abandoned(
        seed, owner_engine, redis_client):
    floor, _ = power_floor(seed, owner_engine, redis_client, agents=1)
    dialer = floor.dialer()
    first, _ = floor.mine(dialer.tick(NOON_NEW_YORK))

    # billed time, no agent: the wait (≤ 2 s) was over before the message
    assert floor.end(dialer, first.call_id, answeredAt=ANSWERED_AT, talkMs=1_200, agentId=None,
                     hangupReason=None) == "abandoned"


def _screening_floor(seed, owner_engine, redis_client, **kw) -> tuple[Floor, Campaign]:
    floor, _ = power_floor(seed, owner_engine, redis_client, **kw)
    with Session(owner_engine) as db, db.begin():
        db.get_one(Campaign, floor.campaign_id).amd = "hangup"
    return floor, floor.dialer()


def test_given_a_screened_campaign_call_then_it_is_ringing_screening_waiting_then_talking_as_the_controller_says(
        seed, owner_engine, redis_client):
    floor, dialer = _screening_floor(seed, owner_engine, redis_client, agents=1)
    first, second = floor.mine(dialer.tick(NOON_NEW_YORK))
    at = NOON_NEW_YORK.timestamp()
    dialer.clock = lambda: NOON_NEW_YORK + timedelta(seconds=5)

    dialer.handle(_envelope("call.answered", first.call_id))
    assert dialer.measures.in_flight(floor.campaign_id, at + 6) == ((6.0,), (1.0,), (), ())
    dialer.handle(_envelope("call.amd", first.call_id, result="human", action="connected"))
    dialer.clock = lambda: NOON_NEW_YORK + timedelta(seconds=7)
    dialer.handle(_envelope("agent.accept", first.call_id, agentId=str(floor.agents[0].id)))
    # a late call.answered (another worker's delivery) does not take the talking call back
    dialer.handle(_envelope("call.answered", first.call_id))
    assert dialer.measures.in_flight(floor.campaign_id, at + 10) == ((10.0,), (), (), (3.0,))
    # an agent.accept for a call this dialer never placed (an inbound queue call) changes nothing
    dialer.handle(_envelope("agent.accept", uuid.uuid4()))
    assert len(dialer.measures.in_flight(floor.campaign_id, at + 10).ringing) == 1 and second


def test_given_power_calls_when_a_machine_is_told_then_its_line_is_free_at_the_verdict_not_at_its_hang_up(
        seed, owner_engine, redis_client):
    """Power 2:1 for one agent: two lines. One answers and is screened (still a line in
    flight); its MACHINE verdict frees the line at once, while its message would still play
    for seconds before call.ended."""
    floor, dialer = _screening_floor(seed, owner_engine, redis_client, agents=1)
    first, _ = floor.mine(dialer.tick(NOON_NEW_YORK))
    dialer.handle(_envelope("call.answered", first.call_id))
    assert floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=5))) == []

    dialer.handle(_envelope("call.amd", first.call_id, result="machine", action="message"))

    assert [d.contact_id for d in floor.mine(dialer.tick(NOON_NEW_YORK + timedelta(seconds=6)))] == [
        floor.contacts[NUMBERS[2]]]


def test_given_a_machine_outcome_then_it_is_a_dial_that_reached_no_person_and_no_live_answer(
        seed, owner_engine, redis_client):
    floor, dialer = _screening_floor(seed, owner_engine, redis_client, agents=1)
    first, second = floor.mine(dialer.tick(NOON_NEW_YORK))

    assert floor.end(dialer, first.call_id, answeredAt=ANSWERED_AT, ringMs=6_000, talkMs=9_000, agentId=None,
                     hangupReason="answering_machine",
                     amd={"result": "machine", "action": "message", "detectionMs": 1_800}) == "machine"
    assert floor.end(dialer, second.call_id, answeredAt=ANSWERED_AT, ringMs=4_000, talkMs=30_000,
                     agentId=str(floor.agents[0].id), hangupReason=None,
                     amd={"result": "human", "action": "connected", "detectionMs": 1_500}) == "human"

    stats = dialer.measures.stats(floor.campaign_id, cap_percent=3.0)
    assert stats.answer_rate_upper() < 1.0 and len(stats._answers) == 1  # the person only
    assert (stats.human_rings.mean(), stats.human_delays.mean(), stats.other_rings.mean()) == (4.0, 5.5, 6.0)
    assert (stats.human_verdicts.mean(), stats.machine_verdicts.mean()) == pytest.approx((1.5, 1.8))


def _envelope(key: str, call_id: uuid.UUID, **payload: str) -> SimpleNamespace:
    return SimpleNamespace(type=key, payload={"callId": str(call_id), **payload})


def test_power_decision_over_the_cap_is_the_progressive_count():
    campaign = Campaign(dialer_mode="power", power_ratio=3.0, abandon_cap_percent=3.0)
    stats = pacing.PacingStats()
    for n in range(4):  # 4 abandons of the floor of 100 answers: 4 % > 3 %
        stats.live_answer(float(n), abandoned=True)
    lines = pacing.Lines(ready_agents=4, busy_elapsed=(), ringing_elapsed=(1.0,), waiting=0)

    decision = overdial.decide(campaign, lines, stats, 10.0)

    assert (decision.dial, decision.rule) == (3, "over_cap")
    assert overdial.decide(campaign, lines, pacing.PacingStats(), 10.0).dial == 11


def _measured(dialer, floor: Floor, *, wrap_up_seconds: float) -> None:
    """60 real outcomes of the last ten minutes: every other one a person after 5 s of ringing,
    talked 60 s, then the group's wrap-up; the others ring out after 20 s."""
    start = NOON_NEW_YORK.timestamp() - 600
    for n in range(60):
        human = n % 2 == 0
        dialer.measures.record(floor.campaign_id, start + n, answered=human, person=human, abandoned=False,
                               ring_seconds=5.0 if human else 20.0, talk_seconds=60.0 if human else 0.0,
                               wrap_up_seconds=wrap_up_seconds)


def _in_wrap_up(floor: Floor, owner_engine, seconds: float) -> None:
    """The floor's only agent, ``seconds`` into the after-call wrap-up the controller set when
    its call ended (app/contact/distribution.py): not idle, so not ready."""
    agent = floor.agents[0]
    with Session(owner_engine) as db, db.begin():
        row = db.get_one(Agent, agent.id)
        row.state, row.state_reason = states.WRAP_UP, states.REASON_AFTER_CALL_WORK
        row.state_changed_at = NOON_NEW_YORK - timedelta(seconds=seconds)
    floor.presence.agent_busy(str(floor.account_id), str(agent.id))


@pytest.mark.parametrize("wrapped, lines", [(9.0, 1), (1.0, 0)])
def test_given_a_predictive_campaigns_only_agent_in_a_10_s_wrap_up_then_it_dials_ahead_only_when_the_wrap_up_is_ending(
        seed, owner_engine, redis_client, wrapped, lines):
    """9 s into 10 s the agent is free in 1 s, before a person answers (5 s): a call is placed
    for it now. 1 s in, it is free in 9 s, after the answer: no call (it would be abandoned).
    Without the wrapping agent's elapsed time the dialer saw no agent at all: 0 either way."""
    floor, _ = power_floor(seed, owner_engine, redis_client, agents=1, mode="predictive")
    dialer = floor.dialer()
    _measured(dialer, floor, wrap_up_seconds=10.0)
    _in_wrap_up(floor, owner_engine, wrapped)

    dialled = floor.mine(dialer.tick(NOON_NEW_YORK))

    assert len(dialled) == lines
    assert floor.idle() == set()  # no agent reserved: the answer takes it once it is ready


def test_given_an_agent_in_after_call_wrap_up_then_the_round_sees_the_seconds_since_its_call_ended(
        seed, owner_engine, redis_client):
    floor, _ = power_floor(seed, owner_engine, redis_client, agents=2, mode="predictive")
    _in_wrap_up(floor, owner_engine, 7.5)
    with Session(owner_engine) as db, db.begin():  # one that chose wrap_up itself: no known end
        other = db.get_one(Agent, floor.agents[1].id)
        other.state, other.state_reason = states.WRAP_UP, None
    with Session(owner_engine) as db:
        campaign = db.get_one(Campaign, floor.campaign_id)
        assert overdial.wrapping_elapsed(db, campaign, NOON_NEW_YORK) == (7.5,)


def test_given_an_answered_campaign_call_when_it_ends_then_its_handle_time_is_talk_plus_the_groups_wrap_up(
        seed, owner_engine, redis_client):
    floor, _ = power_floor(seed, owner_engine, redis_client, agents=1)
    with Session(owner_engine) as db, db.begin():
        db.get_one(Queue, floor.queue_id).wrap_up_seconds = 15
    dialer = floor.dialer()
    first, _ = floor.mine(dialer.tick(NOON_NEW_YORK))

    assert floor.end(dialer, first.call_id, answeredAt=ANSWERED_AT, talkMs=42_000, ringMs=5_000,
                     agentId=str(floor.agents[0].id), queueId=str(floor.queue_id), hangupReason=None) == "human"

    stats = dialer.measures.stats(floor.campaign_id, cap_percent=3.0)
    assert (stats.talks.mean(), stats.wrap_ups.mean(), stats.handles.mean()) == (42.0, 15.0, 57.0)
