"""A small contact centre for the transfer tests (agent channel and REST API): queues, two
registered available agents, and what the outbox and the interaction tables say of a call."""
from __future__ import annotations

import time
import uuid

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.contact.presence import Presence
from app.models import Queue
from app.settings import get_settings
from tests.plugins.agent_rows import add_agent
from tests.simulator.channel import CORE_UUID


def agent_desk(owner_engine, owner_conn, redis_client, account_id, queues=("support",)):
    """The queues, and two available registered agents (``ana`` idle longest) in the first."""
    subdomain = owner_conn.execute(text("SELECT subdomain FROM accounts WHERE id = :a"),
                                   {"a": account_id}).scalar_one()
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    agents = {}
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        rows = [Queue(id=uuid.uuid4(), account_id=account_id, name=name, offer_timeout_seconds=5,
                      max_missed_offers=2, wrap_up_seconds=0, announce_position=False) for name in queues]
        db.add_all(rows)
        db.flush()
        for name in ("ana", "ben"):
            agent = add_agent(db, account_id, [rows[0].id] if name == "ana" else [],
                              f"{name}{uuid.uuid4().hex[:6]}")
            agents[name] = str(agent.id)
            presence.registered(subdomain, agent.sip_username, 60, node=CORE_UUID)
    now_ms = int(time.time() * 1000)
    presence.agent_idle(str(account_id), agents["ana"], since_ms=now_ms - 10_000)
    presence.agent_idle(str(account_id), agents["ben"], since_ms=now_ms - 5_000)
    return agents, presence


def outbox_payloads(owner_conn, call_id: str, key: str) -> list[dict]:
    return [r[0] for r in owner_conn.execute(text(
        "SELECT body->'payload' FROM event_outbox WHERE routing_key = :k "
        "AND body->'payload'->>'callId' = :c ORDER BY created_at"), {"k": key, "c": call_id})]


def rows(owner_conn, sql: str, **params) -> list[dict]:
    return [dict(r) for r in owner_conn.execute(text(sql), params).mappings()]
