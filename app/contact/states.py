"""Agent state changes: the one place that writes ``agents.state``, announces
``agent.state.changed`` (in the same transaction, outbox) and keeps the idle set in Redis in
step, whoever makes the change (the agent, an admin, or the controller after a call or after
missed offers)."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Optional

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.contact import interactions
from app.contact.presence import Presence
from app.errors import NotFound
from app.events.payloads import emit
from app.models import Agent
from app.models.enums import AGENT_STATES

AVAILABLE, NOT_READY, WRAP_UP, OFFLINE = AGENT_STATES
REASON_MISSED = "missed"
# the reason of the wrap_up the controller sets after a call (app/contact/distribution.py):
# leaving it ends the call's after-call work (interaction summary and segment)
REASON_AFTER_CALL_WORK = "after_call_work"


@lru_cache(maxsize=1)
def default_presence() -> Presence:
    """The process's Presence on the configured Redis (API and controller)."""
    import redis

    from app.settings import get_settings

    settings = get_settings()
    return Presence(redis.Redis.from_url(settings.redis_url, socket_timeout=5), settings.redis_key_prefix)


def state_payload(agent: Agent, previous: str) -> dict[str, Any]:
    return {"agentId": str(agent.id), "userId": str(agent.user_id), "state": agent.state,
            "reason": agent.state_reason, "previousState": previous,
            "changedAt": agent.state_changed_at.isoformat()}


def set_state(db: Session, account_id: uuid.UUID, agent_id: uuid.UUID, state: str,
              reason: Optional[str] = None, *, presence: Optional[Presence] = None,
              only_from: Optional[str] = None) -> Optional[Agent]:
    """Set the state (``agent.state.changed`` on every change, even to the same state with a
    new reason). ``only_from``: change only if the agent is in that state now (the
    controller's wrap_up → available must not undo an agent's own ``not_ready``); returns
    None when it did not apply."""
    agent = db.scalar(select(Agent).where(Agent.id == agent_id, Agent.account_id == account_id)
                      .with_for_update())
    if agent is None:
        raise NotFound("No such agent.", code="not_found")
    if only_from is not None and agent.state != only_from:
        return None
    previous, previous_reason, since = agent.state, agent.state_reason, agent.state_changed_at
    agent.state, agent.state_reason = state, reason
    agent.state_changed_at = datetime.now(timezone.utc)
    db.flush()
    if previous == WRAP_UP and previous_reason == REASON_AFTER_CALL_WORK and state != WRAP_UP \
            and since is not None:
        acw_ms = round((agent.state_changed_at - since).total_seconds() * 1000)
        interactions.after_call_work_over(db, account_id, agent.id, acw_ms, since)
    emit("agent.state.changed", state_payload(agent, previous), account_id=account_id, session=db)
    presence = presence or default_presence()
    if state == AVAILABLE:
        presence.agent_idle(str(account_id), str(agent.id))
    else:
        presence.agent_busy(str(account_id), str(agent.id))
    return agent
