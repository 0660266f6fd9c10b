"""A power/predictive campaign's call as the controller dials it (``call.originate`` with a
campaign and an agent group, no agent), against the simulator: least-cost routing restricted
to the campaign's carrier; the answered customer takes the first free agent of the group
through the queue's claim, or — none within 2 s — hears the campaign's safe-harbour message
and is hung up (an answered call with no talk time: the dialer's ``abandoned``)."""
from __future__ import annotations

import re
import time
import uuid

from sqlalchemy.orm import Session

from app import limits
from app.calls.originate import OriginateRequest
from app.campaigns.safe_harbour import ABANDONED_REASON, DEFAULT_TEXT
from app.contact.distribution import ContactCentre
from app.db.engine import tenant_session
from app.events.envelope import Envelope
from app.events.payloads import call_originate
from app.models import Campaign, Gateway, Queue
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
