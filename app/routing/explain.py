"""``explain(number, account)``: which plan, route, carriers and gateways a dial would use, in
try order, with everything skipped and why. Shared by ``sbc lcr explain`` and
``GET /api/lcr/explain`` so operators and tenants see exactly what the controller would do.

Operators (the CLI) see everything. Tenants (``explain_for_tenant``) see the same decision, but
platform carriers' gateways are infrastructure that is not theirs: a platform carrier shows as
tried (id, name, place in the order, why skipped) with its gateway ids, names, addresses, dial
endpoints and the bridge string left out. The account's own carriers stay fully visible."""
from __future__ import annotations

import logging
import uuid
from typing import AbstractSet, Any

import redis

from app.errors import NotFound
from app.routing.cache import compile_routing
from app.routing.gateway_health import GatewayHealth
from app.routing.lcr import Explanation
from app.routing.loader import account_id_for_subdomain, load_rows
from app.routing.rows import RoutingRows
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
    return _explain(load_rows(account_id), number, account_id, redis_client)


def explain_for_tenant(number: str, account_id: uuid.UUID, *,
                       redis_client: redis.Redis | None = None) -> tuple[dict[str, Any], bool]:
    """The tenant's view of ``explain`` as a JSON-ready dict (see the module docstring)."""
    rows = load_rows(account_id)
    result, health_known = _explain(rows, number, account_id, redis_client)
    own_carriers = {c.id for c in rows.carriers if c.account_id == account_id}
    own_gateways = {g.id for g in rows.gateways if g.carrier_id in own_carriers}
    return tenant_view(result, own_carriers, own_gateways), health_known


def tenant_view(result: Explanation, own_carriers: AbstractSet[uuid.UUID],
                own_gateways: AbstractSet[uuid.UUID]) -> dict[str, Any]:
    """``result.to_dict()`` with platform carriers' gateways removed. Anything not known to be
    the account's own is treated as the platform's, so a row missed here stays hidden.
    Consecutive gateways of one platform carrier collapse into one attempt, so not even their
    number shows."""
    body = result.to_dict()
    hidden = False
    attempts: list[dict[str, Any]] = []
    for attempt, shown in zip(result.attempts, body["attempts"]):
        if attempt.carrier_id in own_carriers:
            attempts.append({**shown, "platform": False})
            continue
        hidden = True
        if not (attempts and attempts[-1]["carrierId"] == shown["carrierId"]):
            attempts.append({**shown, **_HIDDEN_GATEWAY, "platform": True})
    skipped: list[dict[str, Any]] = []
    for entry, shown in zip(result.skipped, body["skipped"]):
        if entry.kind == "gateway" and entry.id not in own_gateways:
            hidden = True
            shown = {**shown, "id": None, "name": None}
        if shown not in skipped:
            skipped.append(shown)
    body.update(attempts=attempts, skipped=skipped, platformDetailsHidden=hidden)
    if any(a["platform"] for a in attempts):
        body["bridge"] = None  # it names every gateway it dials
    return body


_HIDDEN_GATEWAY = {"gatewayId": None, "gateway": None, "host": None, "endpoint": None}


def _explain(rows: RoutingRows, number: str, account_id: uuid.UUID,
             redis_client: redis.Redis | None) -> tuple[Explanation, bool]:
    table = compile_routing(rows)
    down, health_known = down_gateways(redis_client)
    return table.explain(number, account_id, down), health_known


def explain_for_subdomain(number: str, subdomain: str, **kw) -> tuple[Explanation, bool]:
    account_id = account_id_for_subdomain(subdomain)
    if account_id is None:
        raise NotFound(f"No account with subdomain {subdomain!r}.", code="account_not_found")
    return explain(number, account_id, **kw)


def _no_publish(*_args, **_kwargs) -> None:  # explain only reads gateway health
    raise RuntimeError("explain never changes gateway state")
