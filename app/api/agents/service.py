"""Agent rules: the user and every queue must be the account's; one agent per user."""
from __future__ import annotations

import logging
import uuid
from typing import Any, Optional

from redis.exceptions import RedisError
from sqlalchemy import delete as sql_delete
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import limits
from app.api.common import flush_or_raise, get_owned
from app.api.pagination import Page, keyset_page
from app.contact import credentials, states
from app.contact.registrations import NEVER_SEEN, Registration, RegistrationStore
from app.crypto import encrypt_secret
from app.errors import NotFound, ValidationFailed
from app.events.payloads import emit, routing_changed
from app.models import Account, Agent, AgentQueue, Queue, User

log = logging.getLogger(__name__)


def _check_user(db: Session, account_id: uuid.UUID, user_id: uuid.UUID) -> User:
    user = db.scalar(select(User).where(User.id == user_id, User.account_id == account_id))
    if user is None:
        raise ValidationFailed("No such user in this account.", code="invalid_reference",
                               details={"user_id": ["No such user."]})
    return user


def check_queues(db: Session, account_id: uuid.UUID, queue_ids: list[uuid.UUID], field: str = "queue_ids") -> list[uuid.UUID]:
    wanted = list(dict.fromkeys(queue_ids))
    found = set(db.scalars(select(Queue.id).where(Queue.id.in_(wanted), Queue.account_id == account_id))) if wanted else set()
    missing = [str(q) for q in wanted if q not in found]
    if missing:
        raise ValidationFailed("Unknown queue(s) for this account.", code="invalid_reference",
                               details={field: [f"No such queue: {q}" for q in missing]})
    return wanted


def memberships(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> dict[uuid.UUID, int] | None:
    """queue id → tier from ``memberships`` or ``queue_ids`` (tier 1), each queue the
    account's; None when the body names neither (memberships unchanged). A queue listed twice
    keeps its first tier."""
    if "memberships" in data:
        tiers: dict[uuid.UUID, int] = {}
        for item in data["memberships"]:
            tiers.setdefault(item["queue_id"], item["tier"])
        check_queues(db, account_id, list(tiers), field="memberships")
        return tiers
    if "queue_ids" in data:
        return {q: limits.QUEUE_MIN_TIER for q in check_queues(db, account_id, data["queue_ids"])}
    return None


def _set_queues(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID, tiers: dict[uuid.UUID, int]) -> None:
    db.execute(sql_delete(AgentQueue).where(AgentQueue.agent_id == agent_id, AgentQueue.account_id == account_id))
    for queue_id, tier in tiers.items():
        db.add(AgentQueue(account_id=account_id, agent_id=agent_id, queue_id=queue_id, tier=tier))
    db.flush()


def registrations(db: Session, account_id: uuid.UUID, agents: list[Agent]) -> Optional[dict[str, Registration]]:
    """SIP user → registration of ``agents`` (one Redis round trip); None when Redis is away
    (the agent is shown without it rather than failing the request)."""
    users = [a.sip_username for a in agents if a.sip_username]
    if not users:
        return {}
    subdomain = db.scalar(select(Account.subdomain).where(Account.id == account_id))
    try:
        return RegistrationStore(states.default_presence()).lookup(subdomain or "", users)
    except RedisError as exc:
        log.warning("agent registrations not read (Redis): %s", exc)
        return None


def view(db: Session, account_id: uuid.UUID, agent: Agent,
         regs: Optional[dict[str, Registration]] = None, *, with_registration: bool = True) -> dict[str, Any]:
    """``regs``: registrations already read for a page of agents (else read for this one)."""
    if with_registration and regs is None:
        regs = registrations(db, account_id, [agent])
    username = db.scalar(select(User.username).where(User.id == agent.user_id, User.account_id == account_id))
    rows = db.execute(select(AgentQueue.queue_id, AgentQueue.tier).where(
        AgentQueue.agent_id == agent.id, AgentQueue.account_id == account_id).order_by(AgentQueue.created_at)).all()
    queue_ids = [queue_id for queue_id, _ in rows]
    body = {name: getattr(agent, name) for name in
            ("id", "user_id", "contact", "state", "state_reason", "state_changed_at", "sip_username",
             "created_at")}
    registration = None
    if regs is not None:
        registration = regs.get(agent.sip_username or "", NEVER_SEEN).as_dict()
    return {**body, "username": username, "queue_ids": queue_ids, "registration": registration,
            "memberships": [{"queue_id": queue_id, "tier": tier} for queue_id, tier in rows]}


def create(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> dict[str, Any]:
    _check_user(db, account_id, data["user_id"])
    tiers = memberships(db, account_id, data) or {}
    row = Agent(id=uuid.uuid4(), account_id=account_id, user_id=data["user_id"], contact=data.get("contact"))
    db.add(row)
    flush_or_raise(db, conflict="This user is already an agent.", conflict_code="agent_exists")
    _set_queues(db, account_id, row.id, tiers)
    db.refresh(row)
    return view(db, account_id, row)


def get(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID) -> dict[str, Any]:
    return view(db, account_id, get_owned(db, Agent, agent_id, account_id, what="agent"))


def update(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID, data: dict[str, Any]) -> dict[str, Any]:
    row = get_owned(db, Agent, agent_id, account_id, what="agent", for_update=True)
    if "contact" in data:
        row.contact = data["contact"]
    tiers = memberships(db, account_id, data)
    if tiers is not None:
        _set_queues(db, account_id, row.id, tiers)
    db.flush()
    return view(db, account_id, row)


def delete(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID) -> None:
    row = get_owned(db, Agent, agent_id, account_id, what="agent", for_update=True)
    db.delete(row)
    db.flush()


def list_page(db: Session, account_id: uuid.UUID, *, cursor: str | None, limit: int,
              queue_id: uuid.UUID | None = None) -> dict[str, Any]:
    stmt = select(Agent).where(Agent.account_id == account_id)
    if queue_id is not None:
        stmt = stmt.where(Agent.id.in_(select(AgentQueue.agent_id).where(
            AgentQueue.queue_id == queue_id, AgentQueue.account_id == account_id)))
    page: Page[Agent] = keyset_page(db, stmt, [Agent.created_at, Agent.id], cursor=cursor, limit=limit)
    regs = registrations(db, account_id, list(page.items))
    return page.to_dict([view(db, account_id, a, regs, with_registration=regs is not None) for a in page.items])


def set_state(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID, data: dict[str, Any]) -> dict[str, Any]:
    agent = states.set_state(db, account_id, agent_id, data["state"], data.get("reason"))
    assert agent is not None  # no only_from: always applies
    return view(db, account_id, agent)


def set_my_state(db: Session, account_id: uuid.UUID, user_id: uuid.UUID, data: dict[str, Any]) -> dict[str, Any]:
    agent_id = db.scalar(select(Agent.id).where(Agent.user_id == user_id, Agent.account_id == account_id))
    if agent_id is None:
        raise NotFound("You are not an agent of this account.", code="not_an_agent")
    return set_state(db, account_id, agent_id, data)


def new_sip_credentials(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID) -> dict[str, Any]:
    """Generate (or replace) the agent's SIP user and password; the controller rewrites the
    directory on the ``routing.config.changed`` this announces (what = agents)."""
    row = get_owned(db, Agent, agent_id, account_id, what="agent", for_update=True)
    password = credentials.new_password()
    row.sip_username = row.sip_username or credentials.new_username()
    row.sip_password_encrypted = encrypt_secret(password)
    flush_or_raise(db, conflict="SIP user name collision; try again.", conflict_code="sip_username_taken")
    emit("routing.config.changed", routing_changed(what="agents", ids=[row.id]), account_id=account_id, session=db)
    domain = db.scalar(select(Account.subdomain).where(Account.id == account_id))
    return {"sip_username": row.sip_username, "sip_password": password, "sip_domain": domain}
