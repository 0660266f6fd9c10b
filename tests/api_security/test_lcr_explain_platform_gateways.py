"""GET /api/lcr/explain must not show a tenant the platform's gateway infrastructure, while the
operator's `sbc lcr explain` still shows everything.

World: the tenant's own plan routes ^99971 to its own carrier first, then a platform carrier
(two outbound gateways); a platform plan (scoped to the tenant's service provider, so no other
test sees it) routes ^99972 to the platform carrier alone.
"""
from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass

import pytest
from click.testing import CliRunner
from sqlalchemy.orm import Session

from app.models import Account, Carrier, Gateway, Lcr, LcrCarrierSetEntry, LcrRoute
from app.routing.gateway_health import GatewayHealth
from app.routing.lcr import gateway_name
from app.settings import get_settings

OWN_NUMBER = "999710000001"       # own plan: own carrier, then the platform carrier
PLATFORM_NUMBER = "999720000001"  # platform plan: platform carrier only


@dataclass
class World:
    tenant: object
    own_carrier: uuid.UUID
    own_gateway: uuid.UUID
    own_host: str
    platform_carrier: uuid.UUID
    platform_gateways: tuple[uuid.UUID, ...]
    platform_hosts: tuple[str, ...]


def _ip() -> str:
    return f"10.{random.randint(0, 255)}.{random.randint(0, 255)}.{random.randint(1, 254)}"


def _carrier(db: Session, account_id, name: str, tech_prefix: str, gateways: int) -> tuple[uuid.UUID, list[uuid.UUID], list[str]]:
    carrier_id = uuid.uuid4()
    db.add(Carrier(id=carrier_id, account_id=account_id, name=name, tech_prefix=tech_prefix))
    db.flush()
    ids, hosts = [], []
    for _ in range(gateways):
        gateway_id, ip = uuid.uuid4(), _ip()
        db.add(Gateway(id=gateway_id, account_id=account_id, carrier_id=carrier_id, ipv4=ip, netmask=32,
                       port=5080, transport="udp", inbound=False, outbound=True))
        ids.append(gateway_id)
        hosts.append(f"{ip}:5080")
    db.flush()
    return carrier_id, ids, hosts


def _route(db: Session, account_id, plan_id, regex: str, carriers: list[uuid.UUID]) -> None:
    route_id = uuid.uuid4()
    db.add(LcrRoute(id=route_id, account_id=account_id, lcr_id=plan_id, regex=regex))
    db.flush()
    for priority, carrier_id in enumerate(carriers):
        db.add(LcrCarrierSetEntry(id=uuid.uuid4(), account_id=account_id, lcr_route_id=route_id,
                                  carrier_id=carrier_id, priority=priority, workload=100))


@pytest.fixture
def world(seed, owner_engine) -> World:
    tenant = seed.tenant()
    with Session(owner_engine) as db, db.begin():
        provider = db.get(Account, tenant.account_id).service_provider_id
        own, (own_gw,), (own_host,) = _carrier(db, tenant.account_id, "own-carrier", "11#", 1)
        platform, platform_gws, platform_hosts = _carrier(db, None, "platform-carrier", "99#", 2)
        own_plan, platform_plan = uuid.uuid4(), uuid.uuid4()
        db.add(Lcr(id=own_plan, account_id=tenant.account_id, name="own-plan"))
        db.add(Lcr(id=platform_plan, account_id=None, service_provider_id=provider, name="platform-plan"))
        db.flush()
        _route(db, tenant.account_id, own_plan, "^99971", [own, platform])
        _route(db, None, platform_plan, "^99972", [platform])
    return World(tenant, own, own_gw, own_host, platform, tuple(platform_gws), tuple(platform_hosts))


def _platform_secrets(world: World) -> list[str]:
    """Anything in a tenant's answer that would reveal the platform's gateways."""
    secrets = [*world.platform_hosts, "99#"]
    for gateway_id in world.platform_gateways:
        secrets += [str(gateway_id), gateway_id.hex, gateway_name(gateway_id)]
    secrets += [host.split(":")[0] for host in world.platform_hosts]
    return secrets


def _explain(api, world: World, number: str) -> dict:
    response = api.login(world.tenant).get("/api/lcr/explain", query_string={"number": number})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_given_own_then_platform_carrier_when_tenant_explains_then_platform_carrier_tried_without_gateway_details(api, world):
    body = _explain(api, world, OWN_NUMBER)
    own, platform = body["attempts"]  # the platform carrier's two gateways collapse into one entry
    assert own == {"carrierId": str(world.own_carrier), "carrier": "own-carrier",
                   "gatewayId": str(world.own_gateway), "gateway": gateway_name(world.own_gateway),
                   "host": world.own_host, "platform": False,
                   "endpoint": f"sofia/gateway/{gateway_name(world.own_gateway)}/11#{OWN_NUMBER}"}
    assert platform == {"carrierId": str(world.platform_carrier), "carrier": "platform-carrier",
                        "gatewayId": None, "gateway": None, "host": None, "endpoint": None,
                        "platform": True}
    assert body["bridge"] is None and body["platformDetailsHidden"] is True
    text = json.dumps(body)
    assert [s for s in _platform_secrets(world) if s in text] == []


def test_given_a_platform_plan_when_tenant_explains_then_plan_and_carrier_shown_but_no_gateway(api, world):
    body = _explain(api, world, PLATFORM_NUMBER)
    assert body["plan"]["name"] == "platform-plan" and body["plan"]["level"] == "platform"
    assert [(a["carrierId"], a["host"]) for a in body["attempts"]] == [(str(world.platform_carrier), None)]
    assert [s for s in _platform_secrets(world) if s in json.dumps(body)] == []


def test_given_a_platform_gateway_down_when_tenant_explains_then_skip_reason_shown_without_gateway_identity(api, world, redis_client):
    health = GatewayHealth(redis_client, get_settings().redis_key_prefix, lambda *a, **k: None)
    for gateway_id in world.platform_gateways:
        health.set_state(gateway_id, "down")
    try:
        body = _explain(api, world, PLATFORM_NUMBER)
    finally:
        for gateway_id in world.platform_gateways:
            health.forget(gateway_id)
    assert body["attempts"] == []
    assert body["skipped"] == [
        {"kind": "gateway", "id": None, "name": None,
         "reason": "gateway of platform-carrier is down (OPTIONS ping)"},
        {"kind": "carrier", "id": str(world.platform_carrier), "name": "platform-carrier",
         "reason": "every outbound gateway is down"},
    ]
    assert [s for s in _platform_secrets(world) if s in json.dumps(body)] == []


def test_given_only_own_gateways_used_when_tenant_explains_then_nothing_is_hidden(api, world, redis_client):
    health = GatewayHealth(redis_client, get_settings().redis_key_prefix, lambda *a, **k: None)
    health.set_state(world.own_gateway, "down")
    try:
        body = _explain(api, world, OWN_NUMBER)
    finally:
        health.forget(world.own_gateway)
    assert body["skipped"][0] == {"kind": "gateway", "id": str(world.own_gateway),
                                  "name": gateway_name(world.own_gateway),
                                  "reason": "gateway of own-carrier is down (OPTIONS ping)"}


def test_given_the_operator_cli_when_explaining_then_platform_gateways_are_shown_in_full(world):
    from app.cli import main

    result = CliRunner().invoke(main, ["lcr", "explain", OWN_NUMBER, "--account", world.tenant.subdomain, "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert [a["host"] for a in body["attempts"]] == [world.own_host, *sorted(
        world.platform_hosts, key=lambda h: tuple(int(p) for p in h.split(":")[0].split(".")))]
    assert all(gateway_name(g) in body["bridge"] for g in world.platform_gateways)
    assert "platformDetailsHidden" not in body
