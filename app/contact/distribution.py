"""What the queue verb asks of the contact centre: the configured queue by name, and the
agent side of an offer (accepted, missed, call over). The verb owns the caller's leg; this
module owns agent state (database + Redis) so the verb stays a translation into FreeSWITCH
applications.

An offer's life (docs/agents.md): the caller's session claims the longest-idle registered
member atomically (app/contact/presence.py), bridges the agent's ``user/`` endpoint with the
queue's offer timeout; answered → ``agent.accept``, misses reset; no answer → ``agent.missed``
and the agent goes to the back of the idle line, or ``not_ready`` (reason ``missed``) after
``max_missed_offers`` in a row; after the call the agent is ``wrap_up`` for the queue's
after-call-work seconds, then ``available`` again (unless it changed state meanwhile).
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Callable, Optional

import gevent
from sqlalchemy import select

from app import limits
from app.contact import cluster, interactions, states
from app.contact.directory import DirectoryEntry, find_directory_user
from app.contact.presence import (
    DEFAULT_STRATEGY,
    ENGAGED_REFRESH_SECONDS,
    STRATEGIES,
    Candidate,
    Claimed,
    Presence,
)
from app.db import tenant_session
from app.models import Account, Agent, AgentQueue, Queue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueueConfig:
    id: uuid.UUID
    name: str
    moh: str
    max_wait_seconds: int
    announce_position: bool
    announce_interval_seconds: int
    timeout_hook_url: Optional[str]
    offer_timeout_seconds: int
    max_missed_offers: int
    wrap_up_seconds: int
    members: tuple[Candidate, ...]
    strategy: str = DEFAULT_STRATEGY
    short_abandon_seconds: int = limits.SHORT_ABANDON_SECONDS
    service_level_seconds: int = limits.QUEUE_DEFAULT_SERVICE_LEVEL_SECONDS


def load_candidate(account_id: str, agent_id: str) -> Optional[Candidate]:
    """The account's agent as an offer candidate (tier 1), when it has SIP credentials."""
    with tenant_session(account_id) as db:
        row = db.execute(
            select(Agent.sip_username, Account.subdomain)
            .join(Account, Account.id == Agent.account_id)
            .where(Agent.id == agent_id, Agent.account_id == account_id,
                   Agent.sip_username.is_not(None), Agent.sip_password_encrypted.is_not(None))).first()
    return None if row is None else Candidate(str(agent_id), row.subdomain, row.sip_username, 1)


def load_queue(account_id: str, name: str) -> Optional[QueueConfig]:
    """The account's queue called ``name`` with its members that have SIP credentials (only
    those can register, so only those can be offered calls); None when there is none."""
    with tenant_session(account_id) as db:
        queue = db.scalar(select(Queue).where(Queue.account_id == account_id, Queue.name == name))
        if queue is None:
            return None
        domain = db.scalar(select(Account.subdomain).where(Account.id == account_id))
        members = db.execute(
            select(Agent.id, Agent.sip_username, AgentQueue.tier)
            .join(AgentQueue, (AgentQueue.agent_id == Agent.id) & (AgentQueue.account_id == Agent.account_id))
            .where(AgentQueue.queue_id == queue.id, Agent.account_id == account_id,
                   Agent.sip_username.is_not(None), Agent.sip_password_encrypted.is_not(None))
            .order_by(AgentQueue.tier, Agent.id)
        ).all()
        return QueueConfig(
            queue.id, queue.name, queue.moh, queue.max_wait_seconds, queue.announce_position,
            queue.announce_interval_seconds, queue.timeout_hook_url, queue.offer_timeout_seconds,
            queue.max_missed_offers, queue.wrap_up_seconds,
            tuple(Candidate(str(agent_id), domain, sip_username, tier) for agent_id, sip_username, tier in members),
            queue.strategy if queue.strategy in STRATEGIES else DEFAULT_STRATEGY,
            queue.short_abandon_seconds, queue.service_level_seconds)


class ContactCentre:
    """The collaborator the queue verb gets through its context (``ctx.contact``)."""

    def __init__(self, presence: Presence, *,
                 loader: Callable[[str, str], Optional[QueueConfig]] = load_queue,
                 later: Callable[..., object] = gevent.spawn_later,
                 directory: Callable[[str, str], Optional[DirectoryEntry]] = find_directory_user,
                 candidate: Callable[[str, str], Optional[Candidate]] = load_candidate) -> None:
        self.presence = presence
        self.candidate = candidate
        self.loader = loader
        self.later = later
        self.directory = directory

    def directory_user(self, account_id: str, username: str) -> Optional[DirectoryEntry]:
        """A ``dial`` target of type ``user``: the account's own directory user, or None."""
        return self.directory(account_id, username)

    def queue(self, account_id: str, name: str) -> Optional[QueueConfig]:
        return self.loader(account_id, name)

    def refreshed(self, account_id: str, queue: QueueConfig) -> QueueConfig:
        """The queue re-read (members change while callers wait); the old one when it was
        deleted meanwhile or the database cannot be reached (the caller keeps waiting)."""
        try:
            return self.loader(account_id, queue.name) or queue
        except Exception:
            log.warning("queue %s: members not refreshed (database unreachable?)", queue.name, exc_info=True)
            return queue

    def only_agent(self, account_id: str, queue: QueueConfig, agent_id: str) -> Optional[QueueConfig]:
        """``queue`` offering only ``agent_id`` (an agent's transfer to another agent): a member
        of the queue or not, the agent needs SIP credentials; None when it has none or is not
        an agent of the account."""
        member = next((m for m in queue.members if m.agent_id == agent_id), None)
        if member is None:
            member = self.candidate(account_id, agent_id)
        return None if member is None else replace(queue, members=(member,))

    def claim(self, account_id: str, queue: QueueConfig, call_id: str, node: str = "") -> Optional[Candidate]:
        """The agent for this caller, registered on the caller's switch ``node`` (Core-UUID)."""
        offered = self.claim_agents(account_id, queue, call_id, node)
        return offered[0][0] if offered else None

    def claim_agents(self, account_id: str, queue: QueueConfig, call_id: str,
                     node: str = "") -> list[tuple[Candidate, Claimed]]:
        """The agent(s) the queue's strategy picks for this caller (several for ring_all),
        registered on the caller's switch ``node`` (Core-UUID) or on a cluster peer it can
        offer to (``agent_leg``), each with its idle place. No preference for the caller's
        own node: the strategy's order is the same whichever node an agent registered on."""
        if node:
            node = ",".join([node, *(peer for peer in self.presence.node_addresses() if peer != node)])
        claimed = self.presence.claim_agents(account_id, queue.name, call_id, queue.members, node, queue.strategy)
        by_id = {c.agent_id: c for c in queue.members}
        return [(by_id[c.agent_id], c) for c in claimed if c.agent_id in by_id]

    def agent_leg(self, candidate: Candidate, caller_node: str) -> tuple[list[str], str]:
        """(leg variables, endpoint) of the offer to ``candidate`` from the caller's switch:
        ``user/`` when the agent registered there, else through its own node's agent profile
        (docs/agents.md "Several FreeSWITCH nodes")."""
        registered_on = self.presence.registered_on(candidate.domain, candidate.sip_username)
        address = ""
        if caller_node and registered_on and registered_on != caller_node:
            address = self.presence.node_addresses().get(registered_on, "")
        return cluster.agent_leg(candidate.sip_username, candidate.domain, address)

    def reachable_from(self, candidate: Candidate, caller_node: str) -> bool:
        """The agent is registered where the caller's switch ``caller_node`` can ring it: on
        that switch, or on a cluster peer whose agent-profile address is known (``agent_leg``).
        An agent registered on a switch nobody knows the address of is not (a queue never
        offers it a caller either: ``claim_agents``' node list)."""
        registered_on = self.presence.registered_on(candidate.domain, candidate.sip_username)
        if not registered_on:
            return False
        if not caller_node or registered_on in ("-", caller_node):
            return True
        return registered_on in self.presence.node_addresses()

    def ring_lost(self, account_id: str, claimed: Claimed) -> None:
        """ring_all: another agent answered first. Not a miss: the agent goes back to its
        place in the idle line (if still available)."""
        self.presence.release(account_id, claimed.agent_id)
        self._idle_if_available(account_id, claimed.agent_id, since_ms=claimed.idle_since_ms)

    def keep_engaged(self, account_id: str, agent_id: str, call_id: str) -> "gevent.Greenlet":
        """Refresh the agent's engaged mark while the offer or call lasts; ``kill()`` the
        returned greenlet when it ends (a dead controller's mark then expires by itself)."""
        def keep() -> None:
            while True:
                gevent.sleep(ENGAGED_REFRESH_SECONDS)
                try:
                    self.presence.keep_engaged(account_id, agent_id, call_id)
                except Exception:  # Redis away: the next round tries again
                    log.warning("agent %s: engaged mark not refreshed", agent_id, exc_info=True)
        return gevent.spawn(keep)

    def claim_consulted(self, account_id: str, candidate: Candidate, leg_id: str) -> Optional[int]:
        """Claim an agent to be consulted (attended transfer): idle and registered, as a queue
        caller's claim needs; its idle-since ms, or None when it is busy (on a call or an
        offer, in wrap-up, not available) or not registered."""
        return self.presence.claim_consulted(account_id, candidate.agent_id, leg_id,
                                             (candidate.domain, candidate.sip_username))

    def consulted_took_call(self, account_id: str, agent_id: str, leg_id: str, call_id: str) -> bool:
        """The consulted agent has the caller now (attended transfer completed): engaged by
        the call with its consulted leg as its leg, as a queue agent after its answer."""
        return self.presence.hand_over_consulted(account_id, agent_id, leg_id, call_id)

    def consult_over(self, account_id: str, agent_id: str, leg_id: str, idle_since_ms: int) -> None:
        """The consulted agent did not take the caller (cancelled, not answered, hung up): it
        goes back to its place in the idle line if it is still available."""
        if self.presence.unclaim_consulted(account_id, agent_id, leg_id):
            self._idle_if_available(account_id, agent_id, since_ms=idle_since_ms)

    def accepted(self, account_id: str, agent_id: str) -> None:
        self.presence.reset_misses(account_id, agent_id)
        try:  # fewest_calls order; a lost count must not fail the answered call
            self.presence.count_handled(account_id, agent_id)
        except Exception:
            log.warning("agent %s: calls-handled count not updated", agent_id, exc_info=True)

    def open_segment(self, account_id: str, trace_id: str, call_id: str, agent_id: str,
                     started_at: datetime) -> Optional[uuid.UUID]:
        """The agent answered: its ownership window starts (app/contact/interactions.py)."""
        return interactions.open_segment(account_id, trace_id, call_id, agent_id, started_at)

    def missed(self, account_id: str, queue: QueueConfig, agent_id: str) -> bool:
        """The offer rang out. Returns True when the agent was made ``not_ready``."""
        misses = self.presence.count_miss(account_id, agent_id)
        self.presence.release(account_id, agent_id)
        if misses >= queue.max_missed_offers:
            self.presence.reset_misses(account_id, agent_id)
            with tenant_session(account_id) as db:
                states.set_state(db, uuid.UUID(account_id), uuid.UUID(agent_id), states.NOT_READY,
                                 states.REASON_MISSED, presence=self.presence)
            return True
        self._idle_if_available(account_id, agent_id)
        return False

    def abandoned_offer(self, account_id: str, agent_id: str) -> None:
        """The caller left while the agent's phone rang, or the phone declined: not a miss
        (the agent goes to the back of the idle line if still available)."""
        self.presence.release(account_id, agent_id)
        self._idle_if_available(account_id, agent_id)

    def call_over(self, account_id: str, queue: QueueConfig, agent_id: str) -> None:
        """After a connected call: wrap_up for the queue's after-call work, then available."""
        self.presence.release(account_id, agent_id)
        if queue.wrap_up_seconds <= 0:
            self._idle_if_available(account_id, agent_id)
            return
        with tenant_session(account_id) as db:
            moved = states.set_state(db, uuid.UUID(account_id), uuid.UUID(agent_id), states.WRAP_UP,
                                     states.REASON_AFTER_CALL_WORK, presence=self.presence, only_from=states.AVAILABLE)
        if moved is not None:
            self.later(queue.wrap_up_seconds, self._wrap_up_over, account_id, agent_id)

    def _wrap_up_over(self, account_id: str, agent_id: str) -> None:
        try:
            with tenant_session(account_id) as db:
                states.set_state(db, uuid.UUID(account_id), uuid.UUID(agent_id), states.AVAILABLE,
                                 presence=self.presence, only_from=states.WRAP_UP)
        except Exception:  # the agent stays wrap_up: it can set itself available
            log.exception("agent %s: end of after-call work not applied", agent_id)

    def _idle_if_available(self, account_id: str, agent_id: str, since_ms: Optional[int] = None) -> None:
        with tenant_session(account_id) as db:
            state = db.scalar(select(Agent.state).where(Agent.id == agent_id, Agent.account_id == account_id))
        if state == states.AVAILABLE:
            self.presence.agent_idle(account_id, agent_id, since_ms=since_ms)
