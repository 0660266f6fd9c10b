"""One agent row as the contact-centre tests need it: a user with the agent role, an
``available`` agent with SIP credentials (password ``pw``), and its queue memberships."""
from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from app.crypto import encrypt_secret
from app.models import Agent, AgentQueue, User


def add_agent(db: Session, account_id: uuid.UUID, queue_ids: list[uuid.UUID], username: str) -> Agent:
    user = User(id=uuid.uuid4(), account_id=account_id, username=username, password_hash="x", role="agent")
    db.add(user)
    db.flush()
    agent = Agent(id=uuid.uuid4(), account_id=account_id, user_id=user.id, state="available",
                  sip_username=f"ag{uuid.uuid4().hex[:12]}", sip_password_encrypted=encrypt_secret("pw"))
    db.add(agent)
    db.flush()
    for queue_id in queue_ids:
        db.add(AgentQueue(account_id=account_id, agent_id=agent.id, queue_id=queue_id))
    return agent
