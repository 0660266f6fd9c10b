"""Offers and live calls over the agent channel, driven through the queue verb on the
FreeSWITCH simulator: agent.offer → ``offer``, the agent's ``reject`` → agent.reject (not a
miss), accept/answer → ``call`` connecting/connected, hold/dtmf/hangup through ``call.control``
on a controller's inbound ESL connection, call.ended → ``call`` ended, disposition stored."""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

import gevent
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.campaigns.dispositions import call_mark_key
from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.crypto import encrypt_secret
from app.events.payloads import emit
from app.models import Agent, AgentQueue, Campaign, CampaignContact, Queue
from app.settings import get_settings
from tests.plugins.eventually import eventually
from tests.simulator import Call
from tests.simulator.channel import CORE_UUID
from tests.simulator.scenario import RingingPhone

QUEUE = [{"verb": "queue", "name": "support", "timeout": 20}]


@dataclass
class Desk:
    tenant: object
    account_id: str
    agent_ids: list[str]       # [the channel's agent, a second agent]
    token: str
    contact: ContactCentre
    presence: Presence


@pytest.fixture
def desk(seed, api, owner_engine, redis_client) -> Desk:
    """Queue ``support`` with two available, registered agents with SIP credentials: ``ana``
    (longest idle: offered first; the one on the channel) and ``ben``."""
    tenant = seed.tenant()
    for name in ("ana", "ben"):
        seed.user(tenant, name, agent=True)
    account = tenant.account_id
    queue = Queue(id=uuid.uuid4(), account_id=account, name="support", offer_timeout_seconds=10,
                  max_missed_offers=3, wrap_up_seconds=0, announce_position=False)
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    agent_ids = []
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        db.add(queue)
        db.flush()
        for name in ("ana", "ben"):
            agent = db.query(Agent).filter(Agent.user_id == tenant.users[name].id).one()
            agent.state = "available"
            agent.sip_username = f"ag{uuid.uuid4().hex[:10]}"
            agent.sip_password_encrypted = encrypt_secret("pw")
            db.add(AgentQueue(account_id=account, agent_id=agent.id, queue_id=queue.id))
            agent_ids.append((str(agent.id), agent.sip_username))
    now_ms = int(time.time() * 1000)
    for n, (agent_id, sip_user) in enumerate(agent_ids):
        presence.registered(tenant.subdomain, sip_user, 60, node=CORE_UUID)
        presence.agent_idle(str(account), agent_id, since_ms=now_ms - 10_000 + n)
    return Desk(tenant, str(account), [a for a, _ in agent_ids],
                api.mint(tenant, "ana", session="agent", role="agent"), ContactCentre(presence), presence)


def _queue_call(run_on_call, desk: Desk, scenario: Call):
    return gevent.spawn(run_on_call, scenario, QUEUE, account_id=desk.account_id, contact=desk.contact,
                        timeout=40)


def _outbox(owner_conn, call_id: str, key: str) -> list[dict]:
    return [r[0]["payload"] for r in owner_conn.execute(text(
        "SELECT body FROM event_outbox WHERE routing_key = :k AND body->'payload'->>'callId' = :c"),
        {"k": key, "c": call_id}).all()]


def test_given_an_offer_when_the_agent_rejects_on_the_channel_then_agent_reject_not_a_miss_and_the_next_agent_is_bridged(
        channel_server, desk, run_on_call, call_control, owner_conn):
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    phone = RingingPhone()
    run = _queue_call(run_on_call, desk, Call().bridge_rings(phone).bridge_answers(talk=0.2))
    offer = client.expect("offer")
    assert offer["phase"] == "ringing" and offer["queue"] == "support" and offer["timeoutSeconds"] == 10
    assert offer["from"] == "15551230000"
    ack = client.command("reject", offerId=offer["offerId"])
    assert ack["ok"] is True, ack
    withdrawn = client.expect("offer", lambda m: m["phase"] == "withdrawn")
    assert withdrawn["reason"] == "rejected" and withdrawn["cause"] == "CALL_REJECTED"
    result = run.get(timeout=40)
    assert result.outcome.reason == "queue_answered" and result.outcome.data["agentId"] == desk.agent_ids[1]
    call_id = offer["offerId"]
    assert [p["agentId"] for p in _outbox(owner_conn, call_id, "agent.reject")] == [desk.agent_ids[0]]
    assert _outbox(owner_conn, call_id, "agent.missed") == []
    assert not desk.presence.redis.get(f"{desk.presence.prefix}cc:{desk.account_id}:misses:{desk.agent_ids[0]}")
    assert phone.b_leg_uuid and f"origination_uuid={phone.b_leg_uuid}" in [
        a for app, a in result.apps() if app == "bridge"][0]


@pytest.mark.parametrize(("refuse", "cause"), [("decline", "CALL_REJECTED"), ("busy", "USER_BUSY")])
def test_given_an_offer_when_the_agents_desk_phone_declines_it_then_it_reads_rejected_as_a_browser_decline_not_a_miss(
        channel_server, desk, run_on_call, owner_conn, refuse, cause):
    """The phone's own 603 Decline / 486 Busy, no channel command: the same reading as the SDK's
    decline (``offer`` ``withdrawn`` ``rejected``, ``agent.reject``, no miss, no segment: a
    segment opens only when an agent answers), and the next agent gets the caller."""
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    phone = RingingPhone()
    run = _queue_call(run_on_call, desk, Call().bridge_rings(phone).bridge_answers(talk=0.2))
    offer = client.expect("offer")

    getattr(phone, refuse)()

    withdrawn = client.expect("offer", lambda m: m["phase"] == "withdrawn")
    assert (withdrawn["reason"], withdrawn["cause"]) == ("rejected", cause)
    result = run.get(timeout=40)
    assert result.outcome.reason == "queue_answered" and result.outcome.data["agentId"] == desk.agent_ids[1]
    call_id = offer["offerId"]
    assert [(p["agentId"], p["cause"]) for p in _outbox(owner_conn, call_id, "agent.reject")] == [
        (desk.agent_ids[0], cause)]
    assert _outbox(owner_conn, call_id, "agent.missed") == []
    assert not desk.presence.redis.get(f"{desk.presence.prefix}cc:{desk.account_id}:misses:{desk.agent_ids[0]}")
    segments = owner_conn.execute(text("SELECT agent_id FROM interaction_segment WHERE call_id = :c"),
                                  {"c": call_id}).scalars().all()
    assert desk.agent_ids[0] not in [str(a) for a in segments]


def test_given_a_connected_call_then_hold_dtmf_and_hangup_reach_the_switch_and_call_ended_is_relayed(
        channel_server, desk, run_on_call, call_control, owner_conn):
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    phone = RingingPhone()
    run = _queue_call(run_on_call, desk, Call().bridge_rings(phone))
    offer = client.expect("offer")
    assert client.command("hangup")["error"]["code"] == "no_call"  # still ringing: that is reject
    assert client.command("accept", offerId=offer["offerId"])["ok"] is True
    assert client.expect("call")["phase"] == "connecting"
    phone.answer()  # the SDK answers its leg
    assert client.expect("call", lambda m: m["phase"] == "connected")["callId"] == offer["offerId"]
    assert client.command("hold")["ok"] is True
    assert client.expect("media")["state"] == "held"
    assert client.command("unhold")["ok"] is True
    assert client.command("dtmf", digits="12#")["ok"] is True
    assert client.command("dtmf", digits="12;x")["error"]["code"] == "validation_failed"
    eventually(lambda: call_control.done >= 3, timeout=15, what="hold, unhold and dtmf done")
    assert client.command("hangup")["ok"] is True
    result = run.get(timeout=40)
    assert result.outcome.reason == "queue_answered"
    leg = phone.b_leg_uuid
    assert result.call.controls == [f"uuid_hold {leg}", f"uuid_hold off {leg}",
                                    f"uuid_send_dtmf {offer['offerId']} 12#"]
    assert client.command("hangup")["error"]["code"] == "no_call"  # released with the call
    emit("call.ended", {"callId": offer["offerId"], "hangupCause": "NORMAL_CLEARING",
                        "agentId": desk.agent_ids[0]}, account_id=desk.account_id)
    ended = client.expect("call", lambda m: m["phase"] == "ended")
    assert ended["cause"] == "NORMAL_CLEARING" and ended["callId"] == offer["offerId"]


def test_given_an_offer_that_rings_out_then_the_offer_is_withdrawn_as_missed(channel_server, desk, run_on_call):
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    run = _queue_call(run_on_call, desk, Call().bridge_fails("NO_ANSWER", "480").bridge_answers(talk=0.1))
    client.expect("offer")
    withdrawn = client.expect("offer", lambda m: m["phase"] == "withdrawn")
    assert withdrawn["reason"] == "missed" and withdrawn["cause"] == "NO_ANSWER"
    run.get(timeout=40)


def test_given_another_agents_offer_then_reject_and_hangup_are_refused(channel_server, desk, run_on_call):
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    assert client.command("reject", offerId=str(uuid.uuid4()))["error"]["code"] == "no_offer"
    assert client.command("accept")["error"]["code"] == "no_offer"
    assert client.command("hangup")["error"]["code"] == "no_call"
    assert client.command("hold")["error"]["code"] == "no_call"


def test_given_an_answered_call_when_the_agent_sends_a_disposition_then_it_is_stored_on_the_interaction(
        channel_server, desk, run_on_call, call_control, owner_conn):
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    phone = RingingPhone(talk=0.2)
    run = _queue_call(run_on_call, desk, Call().bridge_rings(phone))
    offer = client.expect("offer")
    phone.answer()
    client.expect("call", lambda m: m["phase"] == "connected")
    run.get(timeout=40)
    assert client.command("disposition", code=" ")["error"]["code"] == "invalid_disposition"
    assert client.command("disposition", code="sale", callId="nope")["error"]["code"] == "validation_failed"
    assert client.command("disposition", code="sale", callId=str(uuid.uuid4()))["error"]["code"] == "interaction_not_found"
    ack = client.command("disposition", code="sale", callId=offer["offerId"])
    assert ack["ok"] is True, ack
    assert ack["code"] == "sale" and ack["callId"] == offer["offerId"]
    stored = owner_conn.execute(text(
        "SELECT s.disposition FROM interaction_summary s JOIN interaction_segment g ON g.trace_id = s.trace_id "
        "WHERE g.call_id = :c"), {"c": offer["offerId"]}).scalars().all()
    assert stored == ["sale"]
    assert client.command("disposition", code="callback")["ok"] is True  # the latest call by default
    assert owner_conn.execute(text(
        "SELECT s.disposition FROM interaction_summary s JOIN interaction_segment g ON g.trace_id = s.trace_id "
        "WHERE g.call_id = :c"), {"c": offer["offerId"]}).scalar_one() == "callback"


def _campaign_contact(owner_engine, desk: Desk) -> tuple[uuid.UUID, uuid.UUID]:
    """A running progressive campaign on the desk's queue and one contact of it."""
    campaign_id, contact_id = uuid.uuid4(), uuid.uuid4()
    with Session(owner_engine) as db, db.begin():
        queue_id = db.query(Queue.id).filter(Queue.account_id == uuid.UUID(desk.account_id)).scalar()
        db.add(Campaign(id=campaign_id, account_id=uuid.UUID(desk.account_id), name="renewals", status="running",
                        dialer_mode="progressive", caller_id="12125550199", agent_group_ids=[queue_id]))
        db.flush()
        db.add(CampaignContact(id=contact_id, account_id=uuid.UUID(desk.account_id), campaign_id=campaign_id,
                               phone_number="12125550101", time_zones=["America/New_York"]))
    return campaign_id, contact_id


def test_given_a_campaign_call_when_its_agent_sends_a_disposition_then_the_contact_shows_it_and_another_agent_is_refused(
        channel_server, desk, run_on_call, owner_conn, owner_engine, api, redis_client):
    campaign_id, contact_id = _campaign_contact(owner_engine, desk)
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    phone = RingingPhone(talk=0.5)
    run = _queue_call(run_on_call, desk, Call().bridge_rings(phone))
    offer = client.expect("offer")
    # the dialer's mark, as it writes it when it dials the contact (app/campaigns/dialer.py)
    redis_client.set(call_mark_key(desk.presence.prefix, offer["offerId"]), json.dumps(
        {"account": desk.account_id, "campaign": str(campaign_id), "contact": str(contact_id), "waits": False}), ex=600)
    phone.answer()
    client.expect("call", lambda m: m["phase"] == "connected")
    admin = api.login(desk.tenant)

    def contact() -> dict:
        items = admin.get(f"/api/campaigns/{campaign_id}/contacts").get_json()["items"]
        return next(c for c in items if c["id"] == str(contact_id))

    # while live: found by the dialer's mark; the contact's stricter code rule refuses "no sale"
    assert client.command("disposition", code="no sale")["error"]["code"] == "invalid_disposition"
    assert contact()["disposition"] is None
    ack = client.command("disposition", code="callback_later", note="ring after 6")
    assert ack["ok"] is True, ack
    assert (ack["campaignId"], ack["contactId"]) == (str(campaign_id), str(contact_id))
    assert (contact()["disposition"], contact()["disposition_note"]) == ("callback_later", "ring after 6")
    run.get(timeout=40)

    # after the call: the mark is gone (the outcome consumed it) and the call record, stamped
    # with the campaign and contact (app/campaigns/picking.record_outcome), names the contact
    # (this harness runs the verbs only: the record the controller writes is written here)
    redis_client.delete(call_mark_key(desk.presence.prefix, offer["offerId"]))
    owner_conn.execute(text(
        "INSERT INTO call_records (account_id, trace_id, call_id, direction, started_at, status, campaign_id,"
        " contact_id) VALUES (:a, :t, :i, 'outbound', now(), 'completed', :k, :c)"),
        {"a": desk.account_id, "t": run.get().trace_id, "i": offer["offerId"], "k": campaign_id, "c": contact_id})
    owner_conn.commit()
    assert client.command("disposition", code="sale", callId=offer["offerId"])["ok"] is True
    assert contact()["disposition"] == "sale"

    # ben did not handle the call: refused, no hint it exists, the contact keeps ana's code
    ben = channel_server().connect(desk.tenant.host)
    ben.auth(api.mint(desk.tenant, "ben", session="agent", role="agent"))
    refused = ben.command("disposition", code="no_sale", callId=offer["offerId"])
    assert refused["error"]["code"] == "interaction_not_found"
    assert contact()["disposition"] == "sale"

    # the contact deleted since: the interaction still takes the code, the ack names no contact
    assert admin.delete(f"/api/campaigns/{campaign_id}/contacts/{contact_id}").status_code == 204
    ack = client.command("disposition", code="wrong_person", callId=offer["offerId"])
    assert ack["ok"] is True and "contactId" not in ack
    assert owner_conn.execute(text(
        "SELECT s.disposition FROM interaction_summary s JOIN interaction_segment g ON g.trace_id = s.trace_id "
        "WHERE g.call_id = :c"), {"c": offer["offerId"]}).scalar_one() == "wrong_person"
