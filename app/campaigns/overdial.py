"""Power and predictive dialling: more lines than free agents, the answer waits for one.

One round of a power or predictive campaign (``dial``, called by the dialer's loop for a
campaign whose lease it holds):

1. **What the pacer sees** (``pacing.Lines``): the ready agents of the campaign's agent groups
   (available, reachable, idle in Redis — *not* claimed: an answered customer takes the first
   free agent through the queue's atomic claim, app/verbs/campaign_wait.py), the customers
   already waiting in those groups' lines, and the campaign's calls in flight (ringing, and
   live: app/campaigns/measures.py), and the agents in after-call wrap-up with the seconds since
   their call ended (``wrapping_elapsed``): free when the wrap-up ends, so predictive dials
   ahead for them.
2. **How many lines** (``decide``): ``power`` dials ``floor(power_ratio × ready) − ringing −
   waiting`` (``pacing.power``), ``predictive`` what ``pacing.predictive`` gives from the
   campaign's measurements. Both under the abandon cap: when the rolling abandon rate of real
   outcomes is above ``abandon_cap_percent``, 1:1 at once (``pacing.progressive``) until it is
   back under. The account's free concurrency bounds the result.
3. **Dial**: that many contacts are picked (app/campaigns/picking.py) and one
   ``call.originate`` per contact goes to the outbox in the pick's transaction, with the
   campaign id, the agent group whose line the answer joins (the group with the most ready
   agents, spread round-robin), the caller ID and the campaign's trunk (``carrierId``: least-cost
   routing restricted to it).

The answered customer waits at most ``CAMPAIGN_ABANDON_CONNECT_SECONDS`` for an agent; then it
hears the campaign's safe-harbour message and is hung up, and its attempt is ``abandoned``.
"""
from __future__ import annotations

import itertools
import logging
import uuid
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from app import limits
from app.calls.originate import OriginateRequest, originate_payload
from app.campaigns import amd, pacing, picking
from app.contact import states
from app.db.engine import tenant_session
from app.events.payloads import emit
from app.models import Agent, AgentQueue, Campaign, Queue

if TYPE_CHECKING:  # pragma: no cover
    from app.campaigns.dialer import CampaignDialer, Dialled

log = logging.getLogger(__name__)

MODES = ("power", "predictive")


def decide(campaign: Campaign, lines: pacing.Lines, stats: pacing.PacingStats, now: float) -> pacing.Decision:
    """The lines to place now for a power or predictive campaign. Power has no notion of the
    cap in ``pacing.power`` (a fixed ratio); the cap is applied here, as predictive applies it
    itself: above it, 1:1 at once."""
    if campaign.dialer_mode == "predictive":
        return pacing.predictive(lines, stats, now, cap_percent=campaign.abandon_cap_percent)
    rate, cap = stats.abandon_rate(now), campaign.abandon_cap_percent / 100
    if rate > cap:
        return pacing.Decision(pacing.progressive(lines).dial, "over_cap", f"abandon rate {rate:.2%} > cap {cap:.2%}")
    return pacing.power(lines, campaign.power_ratio)


def dial(dialer: "CampaignDialer", account_id: uuid.UUID, campaign_id: uuid.UUID, now: datetime) -> list["Dialled"]:
    """One round of a power or predictive campaign (the module docstring); returns the calls
    placed."""
    from app.campaigns.dialer import Dialled  # the dialer imports this module

    account, at = str(account_id), now.timestamp()
    dialled: list[Dialled] = []
    try:
        with tenant_session(account_id) as db:
            campaign = picking.running_campaign(db, campaign_id)
            if campaign is None:
                return []
            free = dialer.free_agents(db, campaign, skip_waiting_groups=False)
            groups = dict(db.execute(select_group_names(campaign)).all())
            waiting = sum(dialer.presence.waiting(account, name) for name in groups.values())
            calls = dialer.measures.in_flight(campaign_id, at)
            # a person put through by the detection joins the line a moment later: counted once
            waiting = max(waiting, len(calls.connecting))
            lines = pacing.Lines(ready_agents=len(free), busy_elapsed=calls.talking, ringing_elapsed=calls.ringing,
                                 waiting=waiting, wrapping_elapsed=wrapping_elapsed(db, campaign, now),
                                 answered_elapsed=calls.screening)
            stats = dialer.measures.stats(campaign_id, cap_percent=campaign.abandon_cap_percent)
            decision = decide(campaign, lines, stats, at)
            count = dialer.headroom(db, campaign, decision.dial)
            if count <= 0:
                return []
            # the answer joins the line of a group with ready agents, the fullest first
            by_group: dict[uuid.UUID, int] = {}
            for agent in free:
                by_group[agent.queue_id] = by_group.get(agent.queue_id, 0) + 1
            order = sorted(by_group, key=lambda g: -by_group[g]) or list(campaign.agent_group_ids)
            targets = itertools.cycle(order)
            for contact in picking.pick(db, campaign, now, count):
                call_id = uuid.uuid4()
                request = OriginateRequest(
                    call_id=call_id, account_id=account_id, trace_id=uuid.uuid4(),
                    phone_number=contact.phone_number.lstrip("+"),
                    caller_id=(campaign.caller_id or "").lstrip("+") or None,
                    queue_id=next(targets), campaign_id=campaign_id, carrier_id=campaign.carrier_id,
                    timeout_seconds=limits.CAMPAIGN_RING_TIMEOUT_SECONDS)
                emit("call.originate", originate_payload(request), account_id=account_id,
                     trace_id=request.trace_id, session=db)
                dialled.append(Dialled(campaign_id, contact.contact_id, call_id, None, screens=amd.screens(campaign.amd)))
            dialer.mark(account, dialled, at)
    except BaseException:
        dialer.unmark(dialled)
        raise
    if dialled:
        log.info("campaign %s (%s): %d lines for %d ready agents, %d ringing, %d waiting (%s %s)", campaign_id,
                 campaign.dialer_mode, len(dialled), lines.ready_agents, lines.ringing, lines.waiting,
                 decision.rule, decision.detail)
    return dialled


def wrapping_elapsed(db: Session, campaign: Campaign, now: datetime) -> tuple[float, ...]:
    """Seconds since each agent of the campaign's groups now in after-call wrap-up ended its
    call: the controller puts an agent in ``wrap_up`` (reason ``after_call_work``) when its
    call's bridge returns, so the state's ``state_changed_at`` is that moment
    (app/contact/distribution.py). Predictive counts on these agents at the end of their
    wrap-up, a nearly known moment. An agent that chose ``wrap_up`` itself (another reason)
    has no known end and is not counted, like one ``not_ready``."""
    members = select(AgentQueue.agent_id).where(AgentQueue.account_id == campaign.account_id,
                                                AgentQueue.queue_id.in_(campaign.agent_group_ids))
    since = db.scalars(select(Agent.state_changed_at).where(
        Agent.account_id == campaign.account_id, Agent.state == states.WRAP_UP,
        Agent.state_reason == states.REASON_AFTER_CALL_WORK, Agent.id.in_(members))).all()
    return tuple(sorted(max(0.0, (now - changed).total_seconds()) for changed in since))


def select_group_names(campaign: Campaign) -> Select:
    """(queue id, name) of the campaign's agent groups (the lines their answers join)."""
    return select(Queue.id, Queue.name).where(Queue.account_id == campaign.account_id,
                                              Queue.id.in_(campaign.agent_group_ids))
