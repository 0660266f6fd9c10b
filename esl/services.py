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

from app.calls.inbound_route import InboundRoute, find_inbound_route
from app.calls.limiter import ConcurrencyLimiter
from app.db.engine import tenant_session
from app.models import PhoneNumber
from app.routing.cache import RoutingCache
from app.routing.gateway_health import GatewayHealth
from app.routing.lcr import bridge_string
from app.webhooks.client import WebhookClient

if TYPE_CHECKING:  # pragma: no cover
    from esl.outbound import OutboundConnection

# How long the session waits for FreeSWITCH's CHANNEL_HANGUP_COMPLETE after hanging up.
HANGUP_COMPLETE_TIMEOUT_SECONDS = 10.0


class NoRoute(ValueError):
    """No least-cost route can carry this number (the dial verb reports it)."""


@dataclass
class CallServices:
    limiter: ConcurrencyLimiter
    redis: redis.Redis
    webhooks: WebhookClient
    recordings_dir: str
    ws_vendor: str
    routing: Optional[RoutingCache] = None
    gateway_health: Optional[GatewayHealth] = None
    find_route: Callable[[str], Optional[InboundRoute]] = find_inbound_route
    ws_options: dict[str, Any] = field(default_factory=dict)  # resolver/CA for ws handlers
    hangup_complete_timeout: float = HANGUP_COMPLETE_TIMEOUT_SECONDS
    # call id → its socket: the limiter refreshes these slots, reconciliation closes stale ones
    live_calls: dict[str, "OutboundConnection"] = field(default_factory=dict)

    def lcr_bridge(self, account_id: uuid.UUID, number: str) -> str:
        if self.routing is None:
            raise NoRoute("least-cost routing is not configured on this controller")
        down = self.gateway_health.down_gateway_ids() if self.gateway_health else frozenset()
        explanation = self.routing.table().explain(number, account_id, down)
        if not explanation.routable:
            raise NoRoute(f"no route for {number}: {explanation.reason}")
        return bridge_string(explanation)

    @staticmethod
    def account_owns(account_id: uuid.UUID, number: str) -> bool:
        """Ownership through row-level security: another tenant's number is simply not seen."""
        with tenant_session(account_id) as session:
            return session.scalar(
                select(PhoneNumber.id).where(PhoneNumber.number == number.lstrip("+"))
            ) is not None
