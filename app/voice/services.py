"""The collaborators a call session needs, built once per controller process.

Passing them in (instead of importing singletons) lets the tests wire real local ones —
the simulator, a local webhook server, a per-run Redis prefix — through the same code.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional

import redis
from sqlalchemy import select

from app import limits
from app.calls.limiter import ConcurrencyLimiter
from app.calls.originate import OriginatedLeg
from app.calls.record_backlog import RecordBacklog
from app.calls.route import CallRoute, find_inbound_route, find_originated_route
from app.calls.route_snapshot import RouteUnavailable
from app.db.availability import database_unavailable
from app.db.engine import tenant_session
from app.models import PhoneNumber
from app.routing.cache import RoutingCache
from app.routing.dialer import LcrDialer, NoRoute
from app.voice.call_events import EventWriter, default_writer
from app.webhooks.client import WebhookClient

if TYPE_CHECKING:  # pragma: no cover
    from esl.outbound import OutboundConnection

# How long the session waits for FreeSWITCH's CHANNEL_HANGUP_COMPLETE after hanging up.
HANGUP_COMPLETE_TIMEOUT_SECONDS = 10.0


@dataclass
class CallServices:
    limiter: ConcurrencyLimiter
    redis: redis.Redis
    webhooks: WebhookClient
    recordings_dir: str
    ws_vendor: str
    routing: Optional[RoutingCache] = None      # carrier identification from the source IP
    dialer: Optional[LcrDialer] = None          # least-cost routing for phone targets
    contact: Optional[Any] = None               # app.contact.distribution.ContactCentre (queues → agents)
    music: Optional[Any] = None                 # app.media.moh.MusicLibrary (a queue's moh → playback)
    find_route: Callable[[str], Optional[CallRoute]] = find_inbound_route
    find_originated: Callable[[OriginatedLeg, str], Optional[CallRoute]] = find_originated_route
    events: EventWriter = field(default_factory=default_writer)
    ws_options: dict[str, Any] = field(default_factory=dict)  # resolver/CA for ws handlers
    hangup_complete_timeout: float = HANGUP_COMPLETE_TIMEOUT_SECONDS
    # the caller hears the fallback or the apology at the latest this long after the first
    # hook request started (cluster_config webhook.first_reply_deadline_seconds)
    first_reply_deadline: float = limits.WEBHOOK_FIRST_REPLY_DEADLINE_SECONDS
    # call id → its socket: the limiter refreshes these slots, reconciliation closes stale ones
    live_calls: dict[str, "OutboundConnection"] = field(default_factory=dict)
    # call id → its live-control handle (app/voice/live_control.py acts on these), and this
    # process's id in the live-call registry (app/calls/live_calls.py)
    live_sessions: dict[str, Any] = field(default_factory=dict)
    controller_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # calls past their hang-up whose record is being written (app/calls/recovery.py skips them)
    finishing: set[str] = field(default_factory=set)
    # call records: written at hang-up, or held while PostgreSQL is away (None: built here)
    records: Optional[RecordBacklog] = None

    def __post_init__(self) -> None:
        if self.records is None:
            self.records = RecordBacklog(flush_events=self.events.flush)

    def route_for(self, originated: Optional[OriginatedLeg], number: str) -> Optional[CallRoute]:
        """A leg the controller dialled carries its account; any other call is looked up by
        the dialled number."""
        if originated is not None:
            try:
                return self.find_originated(originated, number)
            except Exception as exc:
                if database_unavailable(exc):  # refused cleanly, like an unknown number now
                    raise RouteUnavailable(number) from exc
                raise
        return self.find_route(number)

    def lcr_bridge(self, account_id: uuid.UUID, number: str, carrier_id: Optional[uuid.UUID] = None) -> str:
        """``carrier_id``: least-cost routing restricted to that carrier (a campaign's trunk)."""
        if self.dialer is None:
            raise NoRoute("Least-cost routing is not configured on this controller.")
        return self.dialer.bridge_string(number, account_id, carrier_id=carrier_id)

    @staticmethod
    def account_owns(account_id: uuid.UUID, number: str) -> bool:
        """Ownership through row-level security: another tenant's number is simply not seen."""
        with tenant_session(account_id) as session:
            return session.scalar(
                select(PhoneNumber.id).where(PhoneNumber.number == number.lstrip("+"))
            ) is not None
