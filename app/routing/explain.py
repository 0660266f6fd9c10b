"""``explain(number, account)``: which plan, route, carriers and gateways a dial would use, in
try order, with everything skipped and why. Shared by ``sbc lcr explain`` and
``GET /api/lcr/explain`` so operators and tenants see exactly what the controller would do."""
from __future__ import annotations

import logging
import uuid

import redis

from app.errors import NotFound
from app.routing.cache import compile_routing
from app.routing.gateway_health import GatewayHealth
from app.routing.lcr import Explanation
from app.routing.loader import account_id_for_subdomain, load_rows
from app.settings import get_settings

log = logging.getLogger(__name__)


def down_gateways(client: redis.Redis | None = None) -> tuple[frozenset[uuid.UUID], bool]:
    """(down gateway ids, whether the health store answered)."""
    settings = get_settings()
    client = client or redis.Redis.from_url(settings.redis_url, socket_timeout=2)
    try:
        return GatewayHealth(client, settings.redis_key_prefix, _no_publish).down_gateway_ids(), True
    except redis.RedisError as exc:
        log.warning("gateway health unavailable for explain: %s", exc)
        return frozenset(), False


def explain(number: str, account_id: uuid.UUID, *, redis_client: redis.Redis | None = None) -> tuple[Explanation, bool]:
    """Compile the account's view (its plans + platform plans) fresh from the database; the
    bool says whether live gateway health was taken into account."""
    table = compile_routing(load_rows(account_id))
    down, health_known = down_gateways(redis_client)
    return table.explain(number, account_id, down), health_known


def explain_for_subdomain(number: str, subdomain: str, **kw) -> tuple[Explanation, bool]:
    account_id = account_id_for_subdomain(subdomain)
    if account_id is None:
        raise NotFound(f"No account with subdomain {subdomain!r}.", code="account_not_found")
    return explain(number, account_id, **kw)


def _no_publish(*_args, **_kwargs) -> None:  # explain only reads gateway health
    raise RuntimeError("explain never changes gateway state")
