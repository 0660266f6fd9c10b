"""The callback dispatcher (SPEC "Transitions": an eligible callback goes ``dialing`` when an
agent of its queue becomes available). docs/agents.md "Callbacks" has the status values.

One dispatch, for one agent (``dispatch_for_agent``), in one tenant transaction:

1. the agent must be ``available`` (database) and reachable (SIP credentials or a contact);
2. the highest-priority eligible callback of the agent's queues that have no caller waiting
   (live callers first: the queue verb's claim gets the agent) — ``priority`` desc,
   ``requested_at`` asc; ``pending``, under the attempt limit, its retry delay over, its
   ``scheduled_at`` (if any) come — is
   locked with ``FOR UPDATE SKIP LOCKED``: a second dispatcher skips it and takes the next;
3. the agent is claimed in Redis with the queue callers' rules (app/contact/presence.py
   ``claim_agent``: idle, not engaged, registered; taken out of the idle set and marked
   engaged in one script), so a queue caller and a callback never get the same agent;
4. the callback becomes ``dialing`` with one more attempt, and ``call.originate`` (agentId,
   queueId, callbackId, attempt) goes to the outbox in the same transaction: the status and
   the message commit together or not at all. If the commit fails, the claim is undone.

The controller's dialler (app/voice/originator.py) then rings the customer; answered, the customer's
leg dials the agent (app/calls/route.py) and the callback is ``completed``; not answered, it
goes back to ``pending`` (dialled again after CALLBACK_RETRY_DELAY_SECONDS) or ``failed`` after
the last attempt (app/calls/originate.record_callback_attempt). Every attempt ends with a call
record and ``call.ended`` (agentId set); ``call_ended`` frees the agent then: wrap-up for the
queue's after-call work when the customer answered, idle again when not.

Triggers: ``agent.state.changed`` to ``available`` and ``call.ended`` of a callback call (one
durable queue shared by every ``sbc workers``, so each event is handled once), and a sweep
every CALLBACK_SWEEP_INTERVAL_SECONDS (an agent already available when a callback is created,
a retry delay that ran out, attempts whose outcome was lost).
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

import gevent
from sqlalchemy import and_, case, or_, select, update

from app import limits
from app.calls.originate import OriginateRequest, originate_payload
from app.campaigns import amd
from app.contact import states
from app.contact.presence import Presence
from app.db.engine import platform_session, tenant_session
from app.events.payloads import emit
from app.models import Account, Agent, AgentQueue, Callback, EventOutbox, Queue

log = logging.getLogger(__name__)

PENDING, DIALING, COMPLETED, FAILED, CANCELLED = "pending", "dialing", "completed", "failed", "cancelled"
# the dispatcher's order (SPEC): priority descending, then requested_at ascending; id breaks ties
DISPATCH_ORDER = (Callback.priority.desc(), Callback.requested_at.asc(), Callback.id)
# agents a sweep tries at most (the next sweep takes the rest)
SWEEP_MAX_AGENTS = 1000


@dataclass(frozen=True)
class Dispatched:
    callback_id: uuid.UUID
    call_id: uuid.UUID
    agent_id: uuid.UUID
    queue_id: uuid.UUID
    attempt: int


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _eligible(now: datetime, retry_delay_seconds: float):
    """A callback the dispatcher may dial now."""
    return and_(Callback.status == PENDING,
                Callback.attempts < limits.CALLBACK_MAX_ATTEMPTS,
                or_(Callback.scheduled_at.is_(None), Callback.scheduled_at <= now),
                or_(Callback.last_attempt_at.is_(None),
                    Callback.last_attempt_at <= now - timedelta(seconds=retry_delay_seconds)))


def dispatch_for_agent(account_id: uuid.UUID | str, agent_id: uuid.UUID | str, *, presence: Presence,
                       now: Optional[datetime] = None,
                       retry_delay_seconds: float = limits.CALLBACK_RETRY_DELAY_SECONDS) -> Optional[Dispatched]:
    """Dial the best eligible callback of the agent's queues for this agent; None when the
    agent is not free or no callback is eligible (nothing changed then)."""
    account_id, agent_id = uuid.UUID(str(account_id)), uuid.UUID(str(agent_id))
    now = now or _now()
    claim: Optional[tuple[str, Optional[int]]] = None  # (call id, idle-since) once claimed
    try:
        with tenant_session(account_id) as db:
            agent = db.execute(select(Agent.state, Agent.sip_username, Agent.sip_password_encrypted,
                                      Agent.contact, Account.subdomain)
                               .join(Account, Account.id == Agent.account_id)
                               .where(Agent.id == agent_id, Agent.account_id == account_id)).first()
            if agent is None or agent.state != states.AVAILABLE:
                return None
            registration = None
            if agent.sip_username and agent.sip_password_encrypted:
                registration = (agent.subdomain, agent.sip_username)
            elif not agent.contact:
                return None  # nowhere to ring the agent
            memberships = db.execute(
                select(Queue.id, Queue.name)
                .join(AgentQueue, and_(AgentQueue.queue_id == Queue.id, AgentQueue.account_id == Queue.account_id))
                .where(AgentQueue.agent_id == agent_id, AgentQueue.account_id == account_id)).all()
            # live callers first: a queue with callers waiting keeps its agents for them
            queues = [queue_id for queue_id, name in memberships
                      if not presence.waiting(str(account_id), name)]
            if not queues:
                return None
            callback = db.scalars(
                select(Callback)
                .where(Callback.account_id == account_id, Callback.queue_id.in_(queues),
                       _eligible(now, retry_delay_seconds))
                .order_by(*DISPATCH_ORDER).limit(1)
                .with_for_update(skip_locked=True)).first()
            if callback is None:
                return None
            call_id = uuid.uuid4()
            since = presence.claim_agent(str(account_id), str(agent_id), str(call_id), registration,
                                         limits.CALLBACK_CALL_MARK_TTL_SECONDS,
                                         limits.CALLBACK_ENGAGED_TTL_SECONDS)
            if since is None:
                return None  # taken by a queue caller or another dispatcher, or not registered
            claim = (str(call_id), since)
            attempt = callback.attempts + 1
            callback.status, callback.attempts, callback.last_attempt_at = DIALING, attempt, now
            request = OriginateRequest(
                call_id=call_id, account_id=account_id, trace_id=uuid.uuid4(),
                phone_number=callback.phone_number.lstrip("+"), agent_id=agent_id,
                queue_id=callback.queue_id, callback_id=callback.id, attempt=attempt,
                timeout_seconds=limits.CALLBACK_RING_TIMEOUT_SECONDS)
            emit("call.originate", originate_payload(request), account_id=account_id,
                 trace_id=request.trace_id, session=db)
            dispatched = Dispatched(callback.id, call_id, agent_id, callback.queue_id, attempt)
    except BaseException:
        if claim is not None:  # the callback stays pending: the agent is free again, in place
            try:
                presence.unclaim_agent(str(account_id), str(agent_id), claim[0], claim[1])
            except Exception:  # Redis away too: the engaged mark expires by itself
                log.warning("agent %s: claim for call %s not undone", agent_id, claim[0], exc_info=True)
        raise
    log.info("callback %s: attempt %d dialled for agent %s (call %s)", dispatched.callback_id,
             dispatched.attempt, agent_id, dispatched.call_id)
    return dispatched


def call_ended(account_id: uuid.UUID | str, call_id: str, *, answered: bool,
               queue_id: Optional[uuid.UUID | str], presence: Presence,
               later: Callable[..., Any] = gevent.spawn_later) -> Optional[str]:
    """A callback call (any attempt) is over: free its agent — wrap-up for the queue's
    after-call work when the customer answered (then ``available`` again), idle at once when
    not. Returns the agent id, or None when ``call_id`` is no callback call (or was handled)."""
    account = str(account_id)
    agent_id = presence.callback_call_agent(account, call_id)
    if agent_id is None:
        return None
    presence.unclaim_agent(account, agent_id, call_id, None)
    with tenant_session(account) as db:
        state = db.scalar(select(Agent.state).where(Agent.id == uuid.UUID(agent_id),
                                                    Agent.account_id == uuid.UUID(account)))
        wrap_up = 0
        if answered and queue_id is not None:
            wrap_up = db.scalar(select(Queue.wrap_up_seconds).where(
                Queue.id == uuid.UUID(str(queue_id)), Queue.account_id == uuid.UUID(account))) or 0
        if state == states.AVAILABLE and wrap_up > 0:
            moved = states.set_state(db, uuid.UUID(account), uuid.UUID(agent_id), states.WRAP_UP,
                                     "after_call_work", presence=presence, only_from=states.AVAILABLE)
            if moved is not None:
                later(wrap_up, _wrap_up_over, account, agent_id, presence)
            return agent_id
    if state == states.AVAILABLE:
        presence.agent_idle(account, agent_id)
    return agent_id


def _wrap_up_over(account_id: str, agent_id: str, presence: Presence) -> None:
    """wrap_up → available (only if the agent is still in wrap-up); that change announces
    ``agent.state.changed``, which brings the dispatcher back for this agent."""
    try:
        with tenant_session(account_id) as db:
            states.set_state(db, uuid.UUID(account_id), uuid.UUID(agent_id), states.AVAILABLE,
                             presence=presence, only_from=states.WRAP_UP)
    except Exception:  # the agent stays wrap_up: it can set itself available
        log.exception("agent %s: end of after-call work not applied", agent_id)


def expire_stale_attempts(*, now: Optional[datetime] = None,
                          stale_seconds: float = limits.CALLBACK_DIALING_STALE_SECONDS) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """Attempts still ``dialing`` long after they began lost their outcome: not reached
    (``pending`` again, or ``failed`` at the last attempt). Returns their (account, callback)."""
    now = now or _now()
    with platform_session() as db:
        rows = db.execute(
            update(Callback)
            .where(Callback.status == DIALING,
                   Callback.last_attempt_at < now - timedelta(seconds=stale_seconds))
            .values(status=case((Callback.attempts >= limits.CALLBACK_MAX_ATTEMPTS, FAILED), else_=PENDING))
            .returning(Callback.account_id, Callback.id)).all()
    return [(row[0], row[1]) for row in rows]


def lost_attempt_call(callback_id: uuid.UUID) -> Optional[str]:
    """The call id of a callback's last ``call.originate`` (the outbox keeps it for its
    retention): a lost attempt's agent is freed through it."""
    with platform_session() as db:
        return db.scalar(
            select(EventOutbox.body["payload"]["callId"].astext)
            .where(EventOutbox.routing_key == "call.originate",
                   EventOutbox.body["payload"]["callbackId"].astext == str(callback_id))
            .order_by(EventOutbox.created_at.desc()).limit(1))


def agents_with_work(*, now: Optional[datetime] = None,
                     retry_delay_seconds: float = limits.CALLBACK_RETRY_DELAY_SECONDS,
                     limit: int = SWEEP_MAX_AGENTS) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """(account, agent) of available agents with an eligible callback in one of their queues
    (the cross-tenant sweep: platform role)."""
    now = now or _now()
    with platform_session() as db:
        rows = db.execute(
            select(Agent.account_id, Agent.id).distinct()
            .join(AgentQueue, and_(AgentQueue.agent_id == Agent.id, AgentQueue.account_id == Agent.account_id))
            .join(Callback, and_(Callback.queue_id == AgentQueue.queue_id,
                                 Callback.account_id == Agent.account_id))
            .where(Agent.state == states.AVAILABLE, _eligible(now, retry_delay_seconds))
            .limit(limit)).all()
    return [(row[0], row[1]) for row in rows]


class CallbackDispatcher:
    """The dispatcher as ``sbc workers`` runs it: a durable-queue consumer of
    ``agent.state.changed`` and ``call.ended``, and the periodic sweep. Several instances are
    safe (row locks with skip, the atomic agent claim)."""

    def __init__(self, presence: Presence, *,
                 interval_seconds: float = limits.CALLBACK_SWEEP_INTERVAL_SECONDS,
                 retry_delay_seconds: float = limits.CALLBACK_RETRY_DELAY_SECONDS) -> None:
        self.presence = presence
        self.interval_seconds = interval_seconds
        self.retry_delay_seconds = retry_delay_seconds
        self.dispatched = 0
        self._consumer = None
        self._sweeper: Optional[gevent.Greenlet] = None

    def dispatch(self, account_id: uuid.UUID | str, agent_id: uuid.UUID | str) -> Optional[Dispatched]:
        done = dispatch_for_agent(account_id, agent_id, presence=self.presence,
                                  retry_delay_seconds=self.retry_delay_seconds)
        if done is not None:
            self.dispatched += 1
        return done

    def handle(self, envelope) -> None:  # noqa: ANN001 (app.events.envelope.Envelope)
        """One bus event. ``agent.state.changed`` to available → dispatch for that agent;
        ``call.ended`` of a callback call → free the agent (and dispatch again if idle)."""
        payload, account = envelope.payload or {}, envelope.account
        if not account:
            return
        if envelope.type == "agent.state.changed":
            if payload.get("state") == states.AVAILABLE and payload.get("agentId"):
                self.dispatch(account, payload["agentId"])
        elif envelope.type == "call.ended" and payload.get("callId"):  # one Redis GET per call
            # a machine the campaign's detection ended never reached the agent: no after-call work
            answered = bool(payload.get("answeredAt")) and not amd.machine_not_connected(payload)
            agent = call_ended(account, str(payload["callId"]), answered=answered,
                               queue_id=payload.get("queueId"), presence=self.presence)
            if agent is not None:
                self.dispatch(account, agent)

    def sweep(self) -> int:
        """Lost outcomes back to pending, then one dispatch per agent with work."""
        for account_id, callback_id in expire_stale_attempts():
            log.warning("callback %s: attempt lost its outcome (no result in time)", callback_id)
            call_id = lost_attempt_call(callback_id)
            if call_id:  # its agent is still claimed by that call: free it
                call_ended(account_id, call_id, answered=False, queue_id=None, presence=self.presence)
        count = 0
        for account_id, agent_id in agents_with_work(retry_delay_seconds=self.retry_delay_seconds):
            try:
                if self.dispatch(account_id, agent_id) is not None:
                    count += 1
            except Exception:
                log.exception("callback dispatch for agent %s failed", agent_id)
        return count

    def _sweep_forever(self) -> None:
        while True:
            try:
                self.sweep()
            except Exception:  # database away: the next round tries again
                log.warning("callback sweep failed", exc_info=True)
            gevent.sleep(self.interval_seconds)

    def start(self, **consumer_kw: Any) -> "CallbackDispatcher":
        from app.events.consumer import EventConsumer
        from app.events.work_queues import CALLBACK_DISPATCH

        self._consumer = EventConsumer.of_work_queue(CALLBACK_DISPATCH, self.handle, **consumer_kw).start()
        self._sweeper = gevent.spawn(self._sweep_forever)
        return self

    def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.kill(block=False)
        if self._consumer is not None:
            self._consumer.stop()
