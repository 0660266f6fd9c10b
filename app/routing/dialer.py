"""What the call session calls for a ``phone`` dial target: the LCR bridge string, using the
controller's cached snapshot and live gateway health (VerbContext.lcr_bridge_string)."""
from __future__ import annotations

import dataclasses
import logging
import uuid

import redis

from app.errors import SbcError
from app.ops.metrics import LCR_DECISIONS
from app.routing.cache import RoutingCache, default_cache
from app.routing.gateway_health import GatewayHealth
from app.routing.lcr import Explanation, bridge_string

log = logging.getLogger(__name__)


class NoRoute(SbcError):
    """No carrier can be dialled for this number (no matching route, or all unusable)."""
    status, code = 404, "no_route"


class LcrDialer:
    def __init__(self, cache: RoutingCache | None = None, health: GatewayHealth | None = None) -> None:
        self.cache = cache or default_cache()
        self.health = health

    def down_gateways(self) -> frozenset[uuid.UUID]:
        if self.health is None:
            return frozenset()
        try:
            return self.health.down_gateway_ids()
        except redis.RedisError as exc:
            # Dial anyway: sofia itself fails a down gateway fast with GATEWAY_DOWN, which
            # fails over to the next carrier. Health is an optimisation, not a gate.
            log.warning("gateway health unavailable, dialling without it: %s", exc)
            return frozenset()

    def explain(self, number: str, account_id: uuid.UUID) -> Explanation:
        decision = self.cache.table().explain(number, account_id, self.down_gateways())
        LCR_DECISIONS.labels("routed" if decision.attempts else "no_route").inc()
        return decision

    def bridge_string(self, number: str, account_id: uuid.UUID, *,
                      leg_vars: dict[str, str] | None = None, carrier_id: uuid.UUID | None = None) -> str:
        """``carrier_id``: only that carrier's gateways of the matching route are dialled (a
        campaign's trunk); the route's other carriers are no failover for it."""
        decision = self.explain(number, account_id)
        if carrier_id is not None:
            decision = only_carrier(decision, carrier_id)
        if not decision.attempts:
            raise NoRoute(f"No route for {number}: {decision.reason}.",
                          details={"number": number, "reason": decision.reason})
        return bridge_string(decision, leg_vars=leg_vars)


def only_carrier(decision: Explanation, carrier_id: uuid.UUID) -> Explanation:
    """``decision`` with the attempts of ``carrier_id`` only (its gateways in their order)."""
    attempts = tuple(a for a in decision.attempts if a.carrier_id == carrier_id)
    if attempts == decision.attempts:
        return decision
    reason = decision.reason if attempts or not decision.attempts else \
        "the campaign's carrier is not a usable carrier of the matching route"
    return dataclasses.replace(decision, attempts=attempts, reason=reason)
