"""A power/predictive campaign's call as the controller dials it (``call.originate`` with a
campaign and an agent group, no agent), against the simulator: least-cost routing restricted
to the campaign's carrier; the answered customer takes the first free agent of the group
through the queue's claim, or — none within 2 s — hears the campaign's safe-harbour message
and is hung up (an answered call with no talk time: the dialer's ``abandoned``)."""
from __future__ import annotations

import re
import time
import uuid
from datetime import datetime, timezone

from sqlalchemy import text
from sqlalchemy.orm import Session

from app import limits
from app.calls.limiter import ConcurrencyLimiter
from app.calls.originate import OriginateRequest
from app.campaigns.dialer import CampaignDialer
from app.campaigns.lease import CampaignLeases
from app.campaigns.safe_harbour import ABANDONED_REASON, DEFAULT_TEXT
from app.contact.distribution import ContactCentre
from app.db.engine import tenant_session
from app.events.envelope import Envelope
from app.events.payloads import call_originate
from app.models import Campaign, CampaignContact, Gateway, Queue
from app.routing.lcr import gateway_name
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record, executed
from tests.session.desk import agent_desk
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan

SAFE_HARBOUR = "This is Acme Renewals. Sorry, nobody is free right now; we will call you again. Goodbye."


def _campaign(owner_engine, account_id: uuid.UUID, carrier_id: uuid.UUID, queue_id: uuid.UUID, **fields) -> uuid.UUID:
    campaign_id = uuid.uuid4()
    with Session(owner_engine) as db, db.begin():
        db.add(Campaign(id=campaign_id, account_id=account_id, name="renewals", status="running",
                        dialer_mode="power", carrier_id=carrier_id, agent_group_ids=[queue_id], **fields))
    return campaign_id


def _routed(originator, account_id: uuid.UUID) -> tuple[uuid.UUID, uuid.UUID]:
    """The two-carrier plan live; returns (the second carrier, its gateway)."""
    _, _, backup_gw = two_carrier_plan(account_id)
    originator.services.routing.reload()
    with tenant_session(account_id) as db:
        return db.get_one(Gateway, backup_gw).carrier_id, backup_gw


def _request(account_id: uuid.UUID, campaign_id: uuid.UUID, queue_id: uuid.UUID, carrier_id: uuid.UUID) -> OriginateRequest:
    payload = call_originate(call_id=uuid.uuid4(), phone_number=GERMAN_NUMBER, queue_id=queue_id,
                             campaign_id=campaign_id, carrier_id=carrier_id)
    return OriginateRequest.from_envelope(Envelope("call.originate", payload, account=str(account_id),
                                                   trace_id=str(uuid.uuid4())))


def test_given_no_free_agent_when_the_customer_answers_then_after_2_s_the_safe_harbour_message_and_hang_up(
        dialling, inbound_sim, make_account, owner_engine, owner_conn, redis_client, services):
    originator, _ = dialling
    account = make_account()
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id, queues=("outbound",))
    services.contact = ContactCentre(presence)
    for agent_id in agents.values():  # both on other calls
        presence.agent_busy(str(account.id), agent_id)
    carrier_id, gateway_id = _routed(originator, account.id)
    with tenant_session(account.id) as db:
        queue_id = db.query(Queue.id).filter(Queue.name == "outbound").scalar()
    campaign_id = _campaign(owner_engine, account.id, carrier_id, queue_id, safe_harbour_text=SAFE_HARBOUR)
    request = _request(account.id, campaign_id, queue_id, carrier_id)

    answered_at = time.monotonic()
    assert originator.originate(request) is True

    # least-cost routing restricted to the campaign's carrier: the cheaper first carrier is not dialled
    assert re.findall(r"sofia/gateway/(\w+)/", inbound_sim.originates[0]) == [gateway_name(gateway_id)]
    leg = inbound_sim.originated_calls[0]
    speak = eventually(lambda: next((arg for app, arg in executed(leg) if app == "speak"), None),
                       timeout=10, what="the safe-harbour message")
    waited = time.monotonic() - answered_at
    assert SAFE_HARBOUR in speak
    assert limits.CAMPAIGN_ABANDON_CONNECT_SECONDS <= waited < limits.CAMPAIGN_ABANDON_CONNECT_SECONDS + 1.5
    assert leg.wait(10)
    assert not [arg for app, arg in executed(leg) if app == "bridge"]  # no agent was rung
    record = eventually(lambda: call_record(owner_conn, str(request.call_id)), what="the call record")
    assert record["answered_at"] is not None and record["agent_id"] is None
    assert record["hangup_reason"] == ABANDONED_REASON


def test_given_a_free_agent_when_the_customer_answers_then_the_agent_is_claimed_and_bridged_without_the_message(
        dialling, inbound_sim, make_account, owner_engine, owner_conn, redis_client, services):
    originator, _ = dialling
    account = make_account()
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id, queues=("outbound",))
    services.contact = ContactCentre(presence)
    carrier_id, _ = _routed(originator, account.id)
    with tenant_session(account.id) as db:
        queue_id = db.query(Queue.id).filter(Queue.name == "outbound").scalar()
    campaign_id = _campaign(owner_engine, account.id, carrier_id, queue_id)
    inbound_sim.on_originate = lambda scenario: scenario.bridge_answers(talk=0.3)
    request = _request(account.id, campaign_id, queue_id, carrier_id)

    assert originator.originate(request) is True

    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)
    bridges = [arg for app, arg in executed(leg) if app == "bridge"]
    assert len(bridges) == 1 and f"sbc_agent_id={agents['ana']}" in bridges[0]
    assert not [arg for app, arg in executed(leg) if app == "speak" and DEFAULT_TEXT in arg]
    record = eventually(lambda: call_record(owner_conn, str(request.call_id)), what="the call record")
    assert record["talk_ms"] > 0 and record["agent_id"] == uuid.UUID(agents["ana"])


# Wednesday 2026-11-25 12:00 in Berlin: inside the default calling window
NOON_BERLIN = datetime(2026, 11, 25, 11, 0, tzinfo=timezone.utc)


def _outbox(owner_conn, key: str, field: str, value: str) -> list[dict]:
    return [r[0] for r in owner_conn.execute(text(
        "SELECT body->'payload' FROM event_outbox WHERE routing_key = :k "
        "AND body->'payload'->>:f = :v ORDER BY created_at"), {"k": key, "f": field, "v": value})]


def test_given_power_2_to_1_and_one_free_agent_then_two_calls_one_bridged_one_abandoned_and_over_the_cap_1_to_1(
        dialling, inbound_sim, make_account, owner_engine, owner_conn, redis_client, services):
    """The whole path on the simulator with the dialer's clock injected: the dialer's round
    (two lines for one ready agent), each ``call.originate`` dialled by the controller, the
    first answer claims the agent, the second hears the message after 2 s; their
    ``call.ended`` give ``human`` and ``abandoned``; one abandon is over a 0.5 % cap (the
    rate's floor is 100 answers), so the next round dials 1:1."""
    originator, _ = dialling
    account = make_account()
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id, queues=("outbound",))
    presence.agent_busy(str(account.id), agents["ben"])  # not in the group anyway; ana is its one agent
    services.contact = ContactCentre(presence)
    carrier_id, _ = _routed(originator, account.id)
    with tenant_session(account.id) as db:
        queue_id = db.query(Queue.id).filter(Queue.name == "outbound").scalar()
    campaign_id = _campaign(owner_engine, account.id, carrier_id, queue_id, power_ratio=2.0,
                            abandon_cap_percent=0.5)
    numbers = [f"{GERMAN_NUMBER[:-1]}{n}" for n in range(4)]
    with Session(owner_engine) as db, db.begin():
        for number in numbers:
            db.add(CampaignContact(account_id=account.id, campaign_id=campaign_id, phone_number=f"+{number}",
                                   time_zones=["Europe/Berlin"], created_at=datetime.now(timezone.utc)))
            db.flush()
    leases = CampaignLeases(redis_client, presence.prefix, "dialer-test", ttl_seconds=5)
    dialer = CampaignDialer(presence, leases, ConcurrencyLimiter(redis_client), clock=lambda: NOON_BERLIN)
    inbound_sim.on_originate = lambda scenario: scenario.bridge_answers(talk=3.0)

    placed = [d for d in dialer.tick(NOON_BERLIN) if d.campaign_id == campaign_id]

    assert len(placed) == 2 and {d.agent_id for d in placed} == {None}
    for payload in _outbox(owner_conn, "call.originate", "campaignId", str(campaign_id)):
        originator.handle(Envelope("call.originate", payload, account=str(account.id), trace_id=str(uuid.uuid4())))
    legs = inbound_sim.originated_calls
    assert len(legs) == 2 and all(leg.wait(15) for leg in legs)
    ended = [eventually(lambda d=d: _outbox(owner_conn, "call.ended", "callId", str(d.call_id)), what="call.ended")[0]
             for d in placed]
    assert [dialer.call_ended(payload) for payload in ended] == ["human", "abandoned"]
    bridged, abandoned = (executed(leg) for leg in legs)
    assert any(app == "bridge" and agents["ana"] in arg for app, arg in bridged)
    assert any(app == "speak" and DEFAULT_TEXT in arg for app, arg in abandoned)
    assert not any(app == "bridge" for app, _ in abandoned)

    presence.agent_idle(str(account.id), agents["ana"])  # the agent is free again
    again = [d for d in dialer.tick(NOON_BERLIN) if d.campaign_id == campaign_id]
    assert len(again) == 1  # 1:1: the abandon rate (1 %) is over the campaign's 0.5 % cap
