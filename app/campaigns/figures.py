"""A campaign's live figures: what its attempts ended as, its abandon rate against its cap, its
agents and its contacts left — read from the rows and from Redis presence at the moment asked.

- Attempts come from ``campaigns.outcome_counts``, counted in the transaction that applied each
  outcome (app/campaigns/picking.py): exact, and a restart loses nothing. An attempt counts
  once it has ended; calls ringing or live show as contacts ``in_progress``.
- The abandon rate is abandoned over live answers (``human`` + ``abandoned``) since the campaign
  began. The pacer's own rate (app/campaigns/pacing.py) is over its rolling window with a floored
  denominator; the figure here is the one a regulator's period report would show.
- Agents are the members of the campaign's agent groups, each counted once: ``waiting`` =
  available and idle (in the idle set), ``busy`` = available but engaged (offered, ringing or
  talking), ``wrap_up``, and ``away`` (not ready or offline).
- Calls are the campaign's calls in flight as its dialer sees them (app/campaigns/measures.py):
  ``ringing``, ``screening`` (answered, the answering-machine verdict not in yet), ``waiting``
  (a person waiting for an agent) and ``talking`` (with an agent).
"""
from __future__ import annotations

import time
from typing import Any, Optional

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.campaigns.measures import CampaignMeasures
from app.contact import states
from app.contact.presence import Presence
from app.models import Agent, AgentQueue, Campaign, CampaignContact
from app.models.enums import ATTEMPT_OUTCOMES, CONTACT_STATUSES

# contacts that may still be dialled (in_progress: an attempt or a preview offer is under way)
LEFT_STATUSES = ("pending", "in_progress")


def abandon_rate_percent(counts: dict[str, int]) -> Optional[float]:
    """Abandoned over live answers, in percent; None before the first live answer."""
    live = counts.get("human", 0) + counts.get("abandoned", 0)
    return round(100.0 * counts.get("abandoned", 0) / live, 2) if live else None


def _agents(db: Session, campaign: Campaign, presence: Presence) -> dict[str, int]:
    figures = {"total": 0, "waiting": 0, "busy": 0, "wrap_up": 0, "away": 0}
    if not campaign.agent_group_ids:
        return figures
    rows = db.execute(select(Agent.id, Agent.state).distinct()
                      .join(AgentQueue, (AgentQueue.agent_id == Agent.id) & (AgentQueue.account_id == Agent.account_id))
                      .where(Agent.account_id == campaign.account_id,
                             AgentQueue.queue_id.in_(campaign.agent_group_ids))).all()
    idle = set(presence.idle_agents(str(campaign.account_id)))
    figures["total"] = len(rows)
    for agent_id, state in rows:
        if state == states.AVAILABLE:
            figures["waiting" if str(agent_id) in idle else "busy"] += 1
        elif state == states.WRAP_UP:
            figures["wrap_up"] += 1
        else:
            figures["away"] += 1
    return figures


def _calls(campaign: Campaign, presence: Presence) -> dict[str, int]:
    calls = CampaignMeasures(presence.redis, presence.prefix).in_flight(campaign.id, time.time())
    return {"ringing": len(calls.ringing), "screening": len(calls.screening), "waiting": len(calls.connecting),
            "talking": len(calls.talking)}


def figures(db: Session, campaign: Campaign, presence: Presence) -> dict[str, Any]:
    """The figures of one campaign (the caller checked it is the account's)."""
    counts = {k: int(v) for k, v in (campaign.outcome_counts or {}).items()}
    attempts = {outcome: counts.get(outcome, 0) for outcome in ATTEMPT_OUTCOMES}
    by_status = dict(db.execute(select(CampaignContact.status, func.count())
                                .where(CampaignContact.account_id == campaign.account_id,
                                       CampaignContact.campaign_id == campaign.id)
                                .group_by(CampaignContact.status)).all())
    contacts = {status: int(by_status.get(status, 0)) for status in CONTACT_STATUSES}
    rate = abandon_rate_percent(counts)
    return {
        "campaign_id": campaign.id,
        "status": campaign.status,
        "dialer_mode": campaign.dialer_mode,
        "attempts": {"dialled": sum(attempts.values()), **attempts, "skipped": counts.get("skipped", 0)},
        "abandon_rate_percent": rate,
        "abandon_cap_percent": campaign.abandon_cap_percent,
        "over_cap": rate is not None and rate > campaign.abandon_cap_percent,
        "agents": _agents(db, campaign, presence),
        "calls": _calls(campaign, presence),
        "contacts": {"total": sum(contacts.values()), **contacts,
                     "left": sum(contacts[s] for s in LEFT_STATUSES)},
    }
