"""Claiming a campaign's free agents for one round, and giving back the claims a round did not
use. Progressive and preview rounds both reserve an agent before anything reaches the customer
(a call, or an offer on the agent's screen); they use the atomic claim queue callers use
(``Presence.claim_agent``), so an agent is never given a queue call and a campaign contact at
once, and a claim whose round failed is always undone."""
from __future__ import annotations

import logging
import uuid
from typing import Any, Iterable

from app import limits
from app.contact.presence import Presence

log = logging.getLogger(__name__)

# (the free agent, the call id its claim holds, its place in the idle order before the claim)
Claim = tuple[Any, uuid.UUID, int]


def claim(presence: Presence, account: str, free: Iterable[Any], wanted: int) -> list[Claim]:
    """Claim up to ``wanted`` of ``free`` (idle longest first): an agent another claim took
    meanwhile is passed over. A failure part-way gives back the claims already made."""
    claims: list[Claim] = []
    try:
        for agent in free:
            if len(claims) >= wanted:
                break
            call_id = uuid.uuid4()
            since = presence.claim_agent(account, str(agent.agent_id), str(call_id), agent.registration,
                                         limits.CALLBACK_CALL_MARK_TTL_SECONDS, limits.CALLBACK_ENGAGED_TTL_SECONDS)
            if since is not None:
                claims.append((agent, call_id, since))
    except BaseException:
        release(presence, account, claims)
        raise
    return claims


def release(presence: Presence, account: str, claims: Iterable[Claim]) -> None:
    """Undo claims: each agent back to its place in the idle order."""
    for agent, call_id, since in claims:
        try:
            presence.unclaim_agent(account, str(agent.agent_id), str(call_id), since)
        except Exception:  # Redis away: the engaged mark expires by itself
            log.warning("agent %s: claim for call %s not undone", agent.agent_id, call_id, exc_info=True)
