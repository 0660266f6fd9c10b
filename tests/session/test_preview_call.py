"""A preview offer accepted, dialled on the simulator: the dialer's ``call.originate`` goes to a
controller's originator, the customer answers, the leg dials the agent who accepted (its
registered user in the account's domain) and is bridged; the call's ``call.ended`` completes
the contact and its call record carries the campaign and the contact."""
from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone

from sqlalchemy import text

from app.calls.limiter import ConcurrencyLimiter
from app.calls.originate import OriginateRequest
from app.campaigns.dialer import CampaignDialer
from app.campaigns.lease import CampaignLeases
from app.campaigns.preview import ACCEPTED, PreviewOffers
from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.crypto import encrypt_secret
from app.db.engine import tenant_session
from app.events.envelope import Envelope
from app.models import Agent, AgentQueue, Campaign, CampaignContact, PhoneNumber, Queue, User
from app.settings import get_settings
from tests.plugins.database import unique_number
from tests.session.conftest import call_record, executed
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan

NOON_NEW_YORK = datetime(2026, 11, 25, 17, 0, tzinfo=timezone.utc)  # 18:00 in Berlin: inside the window


def _outbox(owner_conn, account_id, key: str) -> list[dict]:
    return [b["payload"] for b in owner_conn.execute(text(
        "SELECT body FROM event_outbox WHERE routing_key = :k AND body->>'account' = :a ORDER BY created_at"),
        {"k": key, "a": str(account_id)}).scalars()]


def test_given_an_accepted_preview_offer_when_the_customer_answers_then_bridged_to_that_agent_and_the_record_names_the_contact(
        dialling, inbound_sim, make_account, owner_conn, redis_client):
    originator, _ = dialling
    account = make_account()
    two_carrier_plan(account.id)
    originator.services.routing.reload()
    caller_id, sip_user = unique_number(), f"ag{uuid.uuid4().hex[:12]}"
    campaign_id, contact_id = uuid.uuid4(), uuid.uuid4()
    with tenant_session(account.id) as db:
        user = User(account_id=account.id, username=f"pv{uuid.uuid4().hex[:6]}", password_hash="x", role="agent")
        queue = Queue(account_id=account.id, name=f"q{uuid.uuid4().hex[:6]}", wrap_up_seconds=0)
        db.add_all([user, queue, PhoneNumber(account_id=account.id, number=caller_id)])
        db.flush()
        agent = Agent(account_id=account.id, user_id=user.id, state="available", sip_username=sip_user,
                      sip_password_encrypted=encrypt_secret("pw"))
        db.add(agent)
        db.flush()
        db.add(AgentQueue(account_id=account.id, agent_id=agent.id, queue_id=queue.id))
        db.add(Campaign(id=campaign_id, account_id=account.id, name="renewals", status="running",
                        dialer_mode="preview", caller_id=caller_id, agent_group_ids=[queue.id]))
        db.flush()
        db.add(CampaignContact(id=contact_id, account_id=account.id, campaign_id=campaign_id,
                               phone_number=GERMAN_NUMBER, name="Grete", time_zones=["Europe/Berlin"]))
        agent_id = agent.id
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    presence.registered(account.subdomain, sip_user, 600)
    presence.agent_idle(str(account.id), str(agent_id), since_ms=int(time.time() * 1000))
    originator.services.contact = ContactCentre(presence)  # the controller's: the real directory lookup
    dialer = CampaignDialer(presence, CampaignLeases(redis_client, presence.prefix, "preview-sim"),
                            ConcurrencyLimiter(redis_client), clock=lambda: NOON_NEW_YORK)
    try:
        dialer.tick(NOON_NEW_YORK)
        (offer,) = _outbox(owner_conn, account.id, "agent.preview.offer")
        assert offer["contact"]["name"] == "Grete"
        assert PreviewOffers(redis_client, presence.prefix).answer(
            str(account.id), str(agent_id), offer["offerId"], ACCEPTED) is not None
        dialer.tick(NOON_NEW_YORK + timedelta(seconds=1))
        (payload,) = _outbox(owner_conn, account.id, "call.originate")
    finally:
        dialer.release_all()
    inbound_sim.on_originate = lambda scenario: scenario.bridge_answers(talk=0.05)

    request = OriginateRequest.from_envelope(Envelope("call.originate", payload, account=str(account.id),
                                                      trace_id=str(uuid.uuid4())))
    assert originator.originate(request) is True

    assert f"origination_caller_id_number={caller_id}" in inbound_sim.originates[0]
    leg = inbound_sim.originated_calls[0]
    assert leg.wait(10)
    bridges = [arg for app, arg in executed(leg) if app == "bridge"]
    assert len(bridges) == 1 and bridges[0].endswith(f"user/{sip_user}@{account.subdomain}")
    (ended,) = [p for p in _outbox(owner_conn, account.id, "call.ended") if p["callId"] == offer["callId"]]
    assert dialer.call_ended(ended) == "human"
    record = call_record(owner_conn, offer["callId"])
    assert (record["agent_id"], record["campaign_id"], record["contact_id"]) == (agent_id, campaign_id, contact_id)
    assert owner_conn.execute(text("SELECT status FROM campaign_contacts WHERE id = :i"),
                              {"i": contact_id}).scalar_one() == "completed"
