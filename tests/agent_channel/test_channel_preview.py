"""Preview mode over the agent channel: the real dialer loop (app/campaigns/dialer.py, injected
clock) offers a campaign contact, the outbox publisher and the API process's relay bring it to
the agent's socket as an ``offer`` of kind ``preview`` (name, number, attributes), and the
agent's ``skip`` and ``accept`` commands decide what the dialer's next round does; an offer left
unanswered past ``CAMPAIGN_PREVIEW_OFFER_SECONDS`` is withdrawn (reason ``timeout``)."""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app import limits
from app.calls.limiter import ConcurrencyLimiter
from app.campaigns.dialer import CampaignDialer
from app.campaigns.lease import CampaignLeases
from app.contact.presence import Presence
from app.crypto import encrypt_secret
from app.models import Agent, AgentQueue, Campaign, CampaignContact, Queue
from app.settings import get_settings

NOON_NEW_YORK = datetime(2026, 11, 25, 17, 0, tzinfo=timezone.utc)
NUMBERS = ("12125550101", "12125550102")


@dataclass
class PreviewDesk:
    tenant: object
    agent_id: str
    token: str
    contacts: list[str]
    dialer: CampaignDialer
    engine: object

    def outbox(self, key: str) -> list[dict]:
        with self.engine.connect() as conn:
            return [b["payload"] for b in conn.execute(text(
                "SELECT body FROM event_outbox WHERE routing_key = :k AND body->>'account' = :a ORDER BY created_at"),
                {"k": key, "a": str(self.tenant.account_id)}).scalars()]

    def contact(self, n: int) -> tuple[str, int, int]:
        with self.engine.connect() as conn:
            row = conn.execute(text("SELECT status, attempts, skips FROM campaign_contacts WHERE id = :i"),
                               {"i": self.contacts[n]}).one()
        return row.status, row.attempts, row.skips


@pytest.fixture
def preview_desk(seed, api, owner_engine, redis_client) -> PreviewDesk:
    """A running preview campaign, two contacts (the first with a name and attributes), and one
    agent of its group: available, registered, idle, with SIP credentials."""
    tenant = seed.tenant()
    seed.user(tenant, "pia", agent=True)
    account = tenant.account_id
    queue_id, campaign_id = uuid.uuid4(), uuid.uuid4()
    contacts = [str(uuid.uuid4()) for _ in NUMBERS]
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        db.add(Queue(id=queue_id, account_id=account, name="outbound", wrap_up_seconds=0))
        db.flush()
        agent = db.query(Agent).filter(Agent.user_id == tenant.users["pia"].id).one()
        agent.state, agent.sip_username = "available", f"ag{uuid.uuid4().hex[:10]}"
        agent.sip_password_encrypted = encrypt_secret("pw")
        db.add(AgentQueue(account_id=account, agent_id=agent.id, queue_id=queue_id))
        db.add(Campaign(id=campaign_id, account_id=account, name="renewals", status="running", dialer_mode="preview",
                        caller_id="12125550199", agent_group_ids=[queue_id]))
    for n, number in enumerate(NUMBERS):  # one transaction each: offered in this order
        with Session(owner_engine) as db, db.begin():
            db.add(CampaignContact(id=uuid.UUID(contacts[n]), account_id=account, campaign_id=campaign_id,
                                   phone_number=number, time_zones=["America/New_York"],
                                   name="Ada Lovelace" if n == 0 else None,
                                   attributes={"plan": "gold"} if n == 0 else {}))
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    presence.registered(tenant.subdomain, agent.sip_username, 600)
    presence.agent_idle(str(account), str(agent.id), since_ms=int(time.time() * 1000))
    leases = CampaignLeases(redis_client, presence.prefix, f"preview-{uuid.uuid4().hex[:6]}")
    dialer = CampaignDialer(presence, leases, ConcurrencyLimiter(redis_client), clock=lambda: NOON_NEW_YORK)
    yield PreviewDesk(tenant, str(agent.id), api.mint(tenant, "pia", session="agent", role="agent"), contacts,
                      dialer, owner_engine)
    dialer.release_all()


def _preview(client) -> dict:
    return client.expect("offer", lambda m: m.get("kind") == "preview" and m["phase"] == "ringing")


def test_given_a_preview_offer_on_the_channel_when_the_agent_skips_then_the_next_contact_is_offered_and_accept_dials_it(
        channel_server, preview_desk):
    desk = preview_desk
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)

    desk.dialer.tick(NOON_NEW_YORK)
    first = _preview(client)
    assert first["contact"] == {"id": desk.contacts[0], "name": "Ada Lovelace", "phoneNumber": "+" + NUMBERS[0],
                                "attributes": {"plan": "gold"}, "attempts": 1}
    assert first["timeoutSeconds"] == limits.CAMPAIGN_PREVIEW_OFFER_SECONDS

    skipped = client.command("skip", offerId=first["offerId"])
    assert skipped["ok"] is True and skipped["offerId"] == first["offerId"], skipped
    assert client.command("skip", offerId=first["offerId"])["error"]["code"] == "no_offer"  # answered once
    desk.dialer.tick(NOON_NEW_YORK + timedelta(seconds=1))
    assert desk.contact(0) == ("pending", 0, 1)

    second = _preview(client)
    assert second["contact"]["id"] == desk.contacts[1] and second["offerId"] != first["offerId"]
    accepted = client.command("accept")  # no offerId: the preview open on this socket
    assert accepted["ok"] is True, accepted
    assert (accepted["offerId"], accepted["kind"]) == (second["offerId"], "preview")
    assert desk.outbox("call.originate") == []  # the dialer's next round dials
    desk.dialer.tick(NOON_NEW_YORK + timedelta(seconds=2))

    (originate,) = desk.outbox("call.originate")
    assert (originate["callId"], originate["phoneNumber"], originate["agentId"]) == (
        accepted["callId"], NUMBERS[1], desk.agent_id)
    assert desk.contact(1) == ("in_progress", 1, 0)


def test_given_a_preview_offer_nobody_answers_when_the_timeout_passes_then_it_is_withdrawn_on_the_channel(
        channel_server, preview_desk):
    desk = preview_desk
    client = channel_server().connect(desk.tenant.host)
    client.auth(desk.token)
    desk.dialer.tick(NOON_NEW_YORK)
    offer = _preview(client)

    desk.dialer.tick(NOON_NEW_YORK + timedelta(seconds=limits.CAMPAIGN_PREVIEW_OFFER_SECONDS))

    withdrawn = client.expect("offer", lambda m: m["phase"] == "withdrawn")
    assert (withdrawn["kind"], withdrawn["offerId"], withdrawn["reason"]) == ("preview", offer["offerId"], "timeout")
    assert client.command("accept", offerId=offer["offerId"])["error"]["code"] == "no_offer"
    assert desk.contact(0) == ("pending", 0, 0)
    assert desk.outbox("call.originate") == []


def test_given_another_agents_preview_offer_when_this_agent_answers_it_then_no_offer(
        channel_server, preview_desk, seed, api):
    desk = preview_desk
    seed.user(desk.tenant, "otto", agent=True)
    other = channel_server().connect(desk.tenant.host)
    other.auth(api.mint(desk.tenant, "otto", session="agent", role="agent"))
    desk.dialer.tick(NOON_NEW_YORK)
    offer = desk.outbox("agent.preview.offer")[0]

    assert other.command("accept", offerId=offer["offerId"])["error"]["code"] == "no_offer"
    assert other.command("skip", offerId=offer["offerId"])["error"]["code"] == "no_offer"
    assert other.command("skip")["error"]["code"] == "no_offer"
