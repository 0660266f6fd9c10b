"""The dialer: what makes a ``running`` campaign place calls. Run by ``sbc workers``
(docs/campaigns.md "The dialer process" says why there and not in the controller).

Once a second (``CAMPAIGN_DIAL_INTERVAL_SECONDS``) each instance:

1. runs the state sweep (app/campaigns/schedule.py: due scheduled campaigns begin, exhausted
   running ones finish);
2. for every running campaign, takes or renews its lease (app/campaigns/lease.py): one pacing
   loop per campaign across every instance, taken over within ``CAMPAIGN_LEASE_TTL_SECONDS``
   when its holder dies; leases of campaigns no longer running are given back;
3. paces the campaigns it holds (power and predictive: app/campaigns/overdial.py).
   **Progressive**: the agents of
   the campaign's agent groups that are available, registered and idle are *claimed* first —
   the atomic claim queue callers and callbacks use (app/contact/presence.py), so an agent is
   never given two calls — the pacer (app/campaigns/pacing.py) says how many lines that makes,
   the account's free concurrency bounds it, contacts are picked (do-not-call, calling window,
   retry time, ``SKIP LOCKED``: app/campaigns/picking.py), and one ``call.originate`` per
   contact goes to the outbox in the same transaction as the pick: the controller dials it
   through least-cost routing with the campaign's caller ID and the account's concurrency
   limit, and the answered customer dials its reserved agent (the callback path,
   app/calls/route.py). Claimed agents left without a contact are given back at once.

The outcome comes back on ``call.ended`` (one durable queue shared by every ``sbc workers``):
a campaign-call mark in Redis (call id → campaign, contact; ``GETDEL`` so a redelivered event
is applied once) finds the contact, and ``picking.record_outcome`` applies the retry rules and
publishes ``campaign.attempt``. The agent is freed by the callback dispatcher's own
``call.ended`` handling (the claim's call mark is the callback one).

A lost outcome (a controller that died while the phone rang writes no call record, so no
``call.ended`` ever comes) would leave its contact ``in_progress`` and its campaign running for
ever: the lease holder looks for attempts older than ``CAMPAIGN_ATTEMPT_STALE_SECONDS`` whose
call holds no concurrency slot and applies their outcome itself (``recover_lost``).

**Preview** campaigns offer their contacts to agents before dialling: app/campaigns/preview.py,
called from ``tick`` (offers by the lease holder; answered and expired offers settled by any
instance, each once).
"""
from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

import gevent
import redis
from sqlalchemy import and_, select

from app import limits
from app.calls.limiter import ConcurrencyLimiter
from app.calls.originate import OriginateRequest, originate_payload
from app.campaigns import agent_claims, amd, overdial, pacing, picking, schedule
from app.campaigns.dispositions import call_mark_key
from app.campaigns.lease import CampaignLeases
from app.campaigns.measures import CONNECTING, SCREENING, TALKING, CampaignMeasures, seconds_of
from app.campaigns.preview import PreviewDialer, PreviewOffers
from app.campaigns.safe_harbour import ABANDONED_REASON
from app.contact import states
from app.contact.callbacks import call_ended as free_claimed_agent
from app.contact.presence import Presence
from app.db.engine import platform_session, tenant_session
from app.events.payloads import emit
from app.models import Account, Agent, AgentQueue, CallRecord, Campaign, CampaignContact, Queue

log = logging.getLogger(__name__)

# call.ended's hangupReason of an attempt that never answered → the contact's outcome
# (app/voice/originator.CAUSE_REASONS); any other reason of an unanswered call is ``failed``
UNANSWERED_OUTCOMES = {"busy": "busy", "no_answer": "no_answer"}
# the outcomes of an attempt that reached a person: its answer is a live answer, connected or
# abandoned (the abandon rate's denominator)
PERSON_OUTCOMES = frozenset({"human", "abandoned"})


@dataclass(frozen=True)
class Dialled:
    campaign_id: uuid.UUID
    contact_id: uuid.UUID
    call_id: uuid.UUID
    agent_id: Optional[uuid.UUID]  # the agent reserved (progressive); None: the answer waits for one
    screens: bool = False  # the campaign runs answering-machine detection on the answer


@dataclass(frozen=True)
class _FreeAgent:
    agent_id: uuid.UUID
    queue_id: uuid.UUID
    registration: Optional[tuple[str, str]]


def _now() -> datetime:
    return datetime.now(timezone.utc)


def group_wrap_up(db: Any, account_id: uuid.UUID, queue_id: Any) -> float:
    """The wrap-up (seconds) of the agent group whose agent took a call (``call.ended``'s
    ``queueId``): after the talk, the agent is ready only once it is over
    (app/contact/distribution.py). 0 when the call names no group of this account."""
    try:
        queue = uuid.UUID(str(queue_id)) if queue_id else None
    except ValueError:
        return 0.0
    if queue is None:
        return 0.0
    seconds = db.scalar(select(Queue.wrap_up_seconds).where(Queue.id == queue, Queue.account_id == account_id))
    return float(seconds or 0)


def outcome_of(ended: dict[str, Any], *, waited: bool = False) -> str:
    """A campaign call's outcome from its ``call.ended`` payload. A machine the detection hung
    up on or left a message (app/campaigns/amd.py) → ``machine``. Answered: ``abandoned`` when
    the safe-harbour message ended it; for a call whose answer waited for an agent
    (power/predictive, ``waited``) ``human`` once an agent took it (the record's agent), else
    ``abandoned`` (the person hung up while waiting); for a call with its agent reserved
    (progressive) ``human`` when bridged to it (talk time), else ``abandoned``. Not answered →
    ``busy`` / ``no_answer`` from the originator's reason, else ``failed``."""
    if amd.machine_not_connected(ended):
        return "machine"
    if ended.get("answeredAt"):
        if ended.get("hangupReason") == ABANDONED_REASON:
            return "abandoned"
        if waited:
            return "human" if ended.get("agentId") else "abandoned"
        return "human" if (ended.get("talkMs") or 0) > 0 else "abandoned"
    return UNANSWERED_OUTCOMES.get(str(ended.get("hangupReason") or ""), "failed")


def _put_through(mark: dict[str, Any]) -> int:
    """The stage of a person put through to the agents: waiting for the first free one (power,
    predictive: ``agent.accept`` says when one took it), or with the agent reserved for the
    call (progressive, preview: its leg dials that agent at once, and no queue emits
    ``agent.accept``)."""
    return CONNECTING if mark.get("waits") else TALKING


class CampaignDialer:
    """The loop as ``sbc workers`` runs it; ``tick(now)`` is one round (tests call it with an
    injected clock)."""

    def __init__(self, presence: Presence, leases: CampaignLeases, limiter: ConcurrencyLimiter, *,
                 clock: Callable[[], datetime] = _now,
                 interval_seconds: float = limits.CAMPAIGN_DIAL_INTERVAL_SECONDS) -> None:
        self.presence, self.leases, self.limiter = presence, leases, limiter
        self.clock, self.interval_seconds = clock, interval_seconds
        self.held: set[uuid.UUID] = set()
        self.measures = CampaignMeasures(presence.redis, presence.prefix)
        # the events of ``CAMPAIGN_OUTCOMES`` (app/events/work_queues.py) → what applies each
        self._handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "call.ended": self.call_ended, "call.answered": self.call_answered,
            "call.amd": self.call_screened, "agent.accept": self.agent_accepted}
        self._consumer: Any = None
        self._loop: Optional[gevent.Greenlet] = None
        self.previews = PreviewDialer(PreviewOffers(presence.redis, presence.prefix), presence,
                                      free_agents=self.free_agents, headroom=self.headroom, mark=self.mark,
                                      dialled=Dialled)

    @property
    def redis(self) -> redis.Redis:
        return self.presence.redis

    def mark_key(self, call_id: uuid.UUID | str) -> str:
        return call_mark_key(self.presence.prefix, call_id)

    def contact_call_key(self, contact_id: uuid.UUID | str) -> str:
        """contact id → its last attempt's call id (for ``recover_lost``)."""
        return f"{self.presence.prefix}campaign:contact:{contact_id}"

    # -- one round ---------------------------------------------------------------------------
    def tick(self, now: Optional[datetime] = None) -> list[Dialled]:
        now = now or self.clock()
        with platform_session() as db:
            schedule.advance(db, now)
        with platform_session() as db:
            running = db.execute(select(Campaign.id, Campaign.account_id, Campaign.dialer_mode)
                                 .where(Campaign.status == "running")).all()
        for gone in self.held - {row.id for row in running}:
            self.leases.release(gone)
            self.held.discard(gone)
        dialled: list[Dialled] = self.previews.settle(now)  # any instance: each offer is taken once
        for row in running:
            if not self.leases.acquire(row.id):
                self.held.discard(row.id)
                continue
            self.held.add(row.id)
            try:
                self.recover_lost(row.account_id, row.id, now)
                if row.dialer_mode == "progressive":
                    dialled += self.dial_progressive(row.account_id, row.id, now)
                elif row.dialer_mode in overdial.MODES:
                    dialled += overdial.dial(self, row.account_id, row.id, now)
                elif row.dialer_mode == "preview":
                    self.previews.offer(row.account_id, row.id, now)
            except Exception:  # one campaign's fault (database, Redis) never stops the others
                log.exception("campaign %s: pacing round failed", row.id)
        return dialled

    def release_all(self) -> None:
        """Shutting down: another instance takes the campaigns over at once."""
        for campaign_id in list(self.held):
            self.leases.release(campaign_id)
        self.held.clear()

    # -- progressive ---------------------------------------------------------------------------
    def free_agents(self, db: Any, campaign: Campaign, *, skip_waiting_groups: bool = True) -> list[_FreeAgent]:
        """Available, reachable agents of the campaign's agent groups, idle longest first; with
        ``skip_waiting_groups``, only those whose queues have no caller waiting (live callers
        keep their agents, as with callbacks; power/predictive count the waiting instead)."""
        account = str(campaign.account_id)
        rows = db.execute(
            select(Agent.id, Agent.sip_username, Agent.sip_password_encrypted, Agent.contact,
                   Account.subdomain, Queue.id.label("queue_id"), Queue.name.label("queue_name"))
            .join(Account, Account.id == Agent.account_id)
            .join(AgentQueue, and_(AgentQueue.agent_id == Agent.id, AgentQueue.account_id == Agent.account_id))
            .join(Queue, and_(Queue.id == AgentQueue.queue_id, Queue.account_id == AgentQueue.account_id))
            .where(Agent.account_id == campaign.account_id, Agent.state == states.AVAILABLE,
                   AgentQueue.queue_id.in_(campaign.agent_group_ids))
            .order_by(Agent.id, Queue.id)).all()
        idle_order = {agent: n for n, agent in enumerate(self.presence.idle_agents(account))}
        free: dict[uuid.UUID, _FreeAgent] = {}
        for row in rows:
            if row.id in free or str(row.id) not in idle_order or (
                    skip_waiting_groups and self.presence.waiting(account, row.queue_name)):
                continue
            registration = (row.subdomain, row.sip_username) if row.sip_username and row.sip_password_encrypted else None
            if registration is None and not row.contact:
                continue  # nowhere to ring the agent
            free[row.id] = _FreeAgent(row.id, row.queue_id, registration)
        return sorted(free.values(), key=lambda a: idle_order[str(a.agent_id)])

    def headroom(self, db: Any, campaign: Campaign, wanted: int) -> int:
        """Of ``wanted`` lines, those the account may still start: its concurrency limit minus
        its live calls (0 = unlimited). The controller's admission stays the hard check; this
        keeps the dialer from spending contacts' attempts on calls it would refuse."""
        cap = db.scalar(select(Account.max_concurrent_calls).where(Account.id == campaign.account_id))
        if not cap:
            return wanted
        live, _ = self.limiter.counts(campaign.account_id)
        return max(0, min(wanted, cap - live))

    def dial_progressive(self, account_id: uuid.UUID, campaign_id: uuid.UUID, now: datetime) -> list[Dialled]:
        """One pacing round of a progressive campaign: claim free agents, one contact each."""
        account = str(account_id)
        claims: list[agent_claims.Claim] = []
        dialled: list[Dialled] = []
        try:
            with tenant_session(account_id) as db:
                campaign = picking.running_campaign(db, campaign_id)
                if campaign is None:
                    return []
                free = self.free_agents(db, campaign)
                lines = pacing.progressive(pacing.Lines(ready_agents=len(free), busy_elapsed=(),
                                                        ringing_elapsed=())).dial
                lines = self.headroom(db, campaign, lines)
                claims = agent_claims.claim(self.presence, account, free, lines)
                picked = picking.pick(db, campaign, now, len(claims))
                for contact, (agent, call_id, _) in zip(picked, claims):
                    request = OriginateRequest(
                        call_id=call_id, account_id=account_id, trace_id=uuid.uuid4(),
                        phone_number=contact.phone_number.lstrip("+"),
                        caller_id=(campaign.caller_id or "").lstrip("+") or None,
                        agent_id=agent.agent_id, queue_id=agent.queue_id, carrier_id=campaign.carrier_id,
                        timeout_seconds=limits.CAMPAIGN_RING_TIMEOUT_SECONDS, campaign_id=campaign_id)
                    emit("call.originate", originate_payload(request), account_id=account_id,
                         trace_id=request.trace_id, session=db)
                    dialled.append(Dialled(campaign_id, contact.contact_id, call_id, agent.agent_id,
                                          screens=amd.screens(campaign.amd)))
                self.mark(account, dialled, now.timestamp())
        except BaseException:
            agent_claims.release(self.presence, account, claims)
            self.unmark(dialled)
            raise
        agent_claims.release(self.presence, account, claims[len(dialled):])
        for d in dialled:
            log.info("campaign %s: contact %s dialled for agent %s (call %s)", campaign_id, d.contact_id,
                     d.agent_id, d.call_id)
        return dialled

    def mark(self, account: str, dialled: list[Dialled], at: float) -> None:
        """Remember each call's campaign and contact (its outcome comes on ``call.ended``), and
        count it in flight, ringing since ``at`` (epoch seconds; app/campaigns/measures.py)."""
        if not dialled:
            return
        for campaign_id in {d.campaign_id for d in dialled}:
            self.measures.placed(campaign_id, [str(d.call_id) for d in dialled if d.campaign_id == campaign_id], at)
        pipe = self.redis.pipeline()
        for d in dialled:
            pipe.set(self.mark_key(d.call_id),
                     json.dumps({"account": account, "campaign": str(d.campaign_id), "contact": str(d.contact_id),
                                 "waits": d.agent_id is None, "screens": d.screens}),
                     ex=limits.CAMPAIGN_CALL_MARK_TTL_SECONDS)
            pipe.set(self.contact_call_key(d.contact_id), str(d.call_id), ex=limits.CAMPAIGN_CALL_MARK_TTL_SECONDS)
        pipe.execute()

    def unmark(self, dialled: list[Dialled]) -> None:
        """Forget calls that were never placed (their round failed before its commit)."""
        if dialled:
            self.redis.delete(*(self.mark_key(d.call_id) for d in dialled))
            for d in dialled:
                self.measures.ended(d.campaign_id, str(d.call_id))

    # -- outcomes ------------------------------------------------------------------------------
    def call_ended(self, ended: dict[str, Any]) -> Optional[str]:
        """Apply a campaign call's outcome to its contact; returns the outcome, or None when the
        call is no campaign call (or its outcome was applied already)."""
        raw = self.redis.getdel(self.mark_key(str(ended.get("callId") or "")))
        if raw is None:
            return None
        mark = json.loads(raw)
        outcome = outcome_of(ended, waited=mark.get("waits", False))
        answered = bool(ended.get("answeredAt"))
        self.measures.ended(mark["campaign"], str(ended["callId"]))
        with tenant_session(mark["account"]) as db:
            self.measures.record(mark["campaign"], self.clock().timestamp(), answered=answered,
                                 person=outcome in PERSON_OUTCOMES, abandoned=outcome == "abandoned",
                                 ring_seconds=seconds_of(ended.get("ringMs") if answered else ended.get("durationMs")),
                                 verdict_seconds=seconds_of((ended.get("amd") or {}).get("detectionMs")),
                                 talk_seconds=seconds_of(ended.get("talkMs")),
                                 wrap_up_seconds=group_wrap_up(db, uuid.UUID(mark["account"]), ended.get("queueId")))
            campaign = db.get(Campaign, uuid.UUID(mark["campaign"]))
            if campaign is None:
                return None
            picking.record_outcome(db, campaign, uuid.UUID(mark["contact"]), outcome, self.clock(),
                                   amd=ended.get("amd"), call_id=uuid.UUID(str(ended["callId"])))
        return outcome

    def recover_lost(self, account_id: uuid.UUID, campaign_id: uuid.UUID, now: datetime) -> dict[uuid.UUID, str]:
        """Apply the outcome of this campaign's attempts that lost their ``call.ended``:
        ``in_progress`` for longer than ``CAMPAIGN_ATTEMPT_STALE_SECONDS`` and their call
        neither ringing nor live (no concurrency slot). The call record, if the call has one,
        gives the outcome (its call.ended was lost after it was written); none → ``failed``.
        The claimed agent is freed. Returns {contact id: outcome}. Run by the lease holder
        only, so two instances never apply one attempt twice."""
        cutoff = now - timedelta(seconds=limits.CAMPAIGN_ATTEMPT_STALE_SECONDS)
        recovered: dict[uuid.UUID, str] = {}
        with tenant_session(account_id) as db:
            stale = db.scalars(select(CampaignContact.id).where(
                CampaignContact.campaign_id == campaign_id, CampaignContact.account_id == account_id,
                CampaignContact.status == "in_progress", CampaignContact.last_attempt_at < cutoff)).all()
            if not stale:
                return recovered
            calls = {contact: self._decoded(self.redis.get(self.contact_call_key(contact))) for contact in stale}
            live = self.limiter.holding([c for c in calls.values() if c])
            campaign = db.get_one(Campaign, campaign_id)
            for contact, call_id in calls.items():
                if call_id in live:
                    continue
                record = db.execute(select(CallRecord.answered_at, CallRecord.talk_ms, CallRecord.hangup_reason,
                                           CallRecord.agent_id)
                                    .where(CallRecord.account_id == account_id,
                                           CallRecord.call_id == uuid.UUID(call_id))).first() if call_id else None
                mark = self.redis.get(self.mark_key(call_id)) if call_id else None
                outcome = outcome_of({"answeredAt": record.answered_at, "talkMs": record.talk_ms,
                                      "hangupReason": record.hangup_reason, "agentId": record.agent_id}
                                     if record else {}, waited=bool(mark and json.loads(mark).get("waits")))
                picking.record_outcome(db, campaign, contact, outcome, now,
                                       call_id=uuid.UUID(call_id) if call_id else None)
                recovered[contact] = outcome
                if call_id:
                    self.redis.delete(self.mark_key(call_id))
                    self.measures.ended(campaign_id, call_id)
        for contact, outcome in recovered.items():
            call_id = calls[contact]
            log.warning("campaign %s: contact %s lost its outcome; applied %s", campaign_id, contact, outcome)
            if call_id:
                free_claimed_agent(account_id, call_id, answered=False, queue_id=None, presence=self.presence)
        return recovered

    @staticmethod
    def _decoded(value: Any) -> Optional[str]:
        return value.decode() if isinstance(value, bytes) else value

    def call_answered(self, answered: dict[str, Any]) -> None:
        """A campaign call answered: no longer ringing for the pacer; screened by the
        answering-machine detection, or (without it) a person waiting for an agent."""
        mark = self._mark_of(answered)
        if mark is not None:
            stage = SCREENING if mark.get("screens") else _put_through(mark)
            self.measures.advance(mark["campaign"], str(answered["callId"]), stage, self.clock().timestamp())

    def call_screened(self, verdict: dict[str, Any]) -> None:
        """A campaign call's answering-machine verdict (``call.amd``): on to an agent (a person,
        a NOTSURE, or any verdict in ``connect`` mode), or out of the pacer's sight (a machine
        hung up or left a message: it will never take an agent)."""
        mark = self._mark_of(verdict)
        if mark is None:
            return
        if verdict.get("action") == amd.CONNECTED:
            self.measures.advance(mark["campaign"], str(verdict["callId"]), _put_through(mark), self.clock().timestamp())
        else:
            self.measures.ended(mark["campaign"], str(verdict["callId"]))

    def agent_accepted(self, accepted: dict[str, Any]) -> None:
        """An agent took a campaign call (``agent.accept``): the agent is busy from now, free
        when the talk and its wrap-up end."""
        mark = self._mark_of(accepted)
        if mark is not None:
            self.measures.advance(mark["campaign"], str(accepted["callId"]), TALKING, self.clock().timestamp())

    def _mark_of(self, payload: dict[str, Any]) -> Optional[dict[str, Any]]:
        raw = self.redis.get(self.mark_key(str(payload.get("callId") or "")))
        return json.loads(raw) if raw is not None else None

    def handle(self, envelope: Any) -> None:  # app.events.envelope.Envelope
        handler = self._handlers.get(envelope.type)
        if handler is not None and envelope.payload:
            handler(envelope.payload)

    # -- the process -----------------------------------------------------------------------------
    def _run_forever(self) -> None:
        while True:
            try:
                self.tick()
            except Exception:  # database or Redis away: the next round tries again
                log.warning("campaign dialer round failed", exc_info=True)
            gevent.sleep(self.interval_seconds)

    def start(self, **consumer_kw: Any) -> "CampaignDialer":
        from app.events.consumer import EventConsumer
        from app.events.work_queues import CAMPAIGN_OUTCOMES

        self._consumer = EventConsumer.of_work_queue(CAMPAIGN_OUTCOMES, self.handle, **consumer_kw).start()
        self._loop = gevent.spawn(self._run_forever)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.kill()
        if self._consumer is not None:
            self._consumer.stop()
        self.release_all()
