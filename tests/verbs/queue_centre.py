"""The contact centre the queue verb tests share (fixture ``centre`` in conftest.py): one
queue and two available, registered agents with SIP credentials."""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.models import Agent, Queue
from app.settings import get_settings
from tests.plugins.agent_rows import add_agent
from tests.simulator.channel import CORE_UUID


@dataclass
class Centre:
    account_id: str
    subdomain: str
    queue_id: uuid.UUID
    agents: list[Agent]
    contact: ContactCentre
    presence: Presence

    def agent_row(self, owner_engine, agent: Agent) -> tuple[str, str | None]:
        with owner_engine.connect() as conn:
            return tuple(conn.execute(text("SELECT state, state_reason FROM agents WHERE id = :i"),
                                      {"i": agent.id}).one())


def make_centre(seed, owner_engine, redis_client) -> Centre:
    """A tenant with queue ``support`` (offer 5 s, 2 misses, wrap-up 0.5 s → 1 s) and two
    available agents with SIP credentials: agent 0 idle longer than agent 1, both registered."""
    tenant = seed.tenant()
    account = tenant.account_id
    queue = Queue(id=uuid.uuid4(), account_id=account, name="support", offer_timeout_seconds=5,
                  max_missed_offers=2, wrap_up_seconds=1, announce_position=False)
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        db.add(queue)
        agents = [add_agent(db, account, [queue.id], f"agent{n}") for n in range(2)]
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    now_ms = int(time.time() * 1000)
    for n, agent in enumerate(agents):
        presence.registered(tenant.subdomain, agent.sip_username, 60, node=CORE_UUID)
        presence.agent_idle(str(account), str(agent.id), since_ms=now_ms - 10_000 + n)
    return Centre(str(account), tenant.subdomain, queue.id, agents, ContactCentre(presence), presence)
