"""Explain from the database: GET /api/lcr/explain and `sbc lcr explain`, plus the loader's
tenant scoping (own + platform rows only)."""
from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner
from sqlalchemy.orm import Session

from app.models import Carrier, Gateway, Lcr, LcrCarrierSetEntry, LcrRoute
from app.routing.gateway_health import GatewayHealth
from app.routing.lcr import gateway_name
from app.routing.loader import load_rows
from app.settings import get_settings


def _seed_routing(owner_engine, account_id: uuid.UUID | None, *, regex: str, name: str,
                  ip: str, tech_prefix: str = "") -> dict[str, uuid.UUID]:
    ids = {k: uuid.uuid4() for k in ("carrier", "gateway", "plan", "route", "entry")}
    with Session(owner_engine) as db, db.begin():
        db.add(Carrier(id=ids["carrier"], account_id=account_id, name=f"{name}-carrier", tech_prefix=tech_prefix))
        db.flush()
        db.add(Gateway(id=ids["gateway"], account_id=account_id, carrier_id=ids["carrier"], ipv4=ip,
                       netmask=32, port=5060, transport="udp", inbound=True, outbound=True))
        db.add(Lcr(id=ids["plan"], account_id=account_id, name=f"{name}-plan"))
        db.flush()
        db.add(LcrRoute(id=ids["route"], account_id=account_id, lcr_id=ids["plan"], regex=regex, priority=0))
        db.flush()
        db.add(LcrCarrierSetEntry(id=ids["entry"], account_id=account_id, lcr_route_id=ids["route"],
                                  carrier_id=ids["carrier"], priority=0, workload=100))
    return ids


@pytest.fixture()
def routed_tenant(seed, owner_engine):
    tenant = seed.tenant()
    other = seed.tenant()
    own = _seed_routing(owner_engine, tenant.account_id, regex="^4420", name="own", ip="198.51.100.21",
                        tech_prefix="77#")
    foreign = _seed_routing(owner_engine, other.account_id, regex="^4420", name="foreign", ip="198.51.100.22")
    return tenant, other, own, foreign


def test_given_tenant_when_loading_rows_then_only_own_and_platform_rows(routed_tenant):
    tenant, other, own, foreign = routed_tenant
    rows = load_rows(tenant.account_id)
    carrier_ids = {c.id for c in rows.carriers}
    assert own["carrier"] in carrier_ids and foreign["carrier"] not in carrier_ids
    assert all(c.account_id in (None, tenant.account_id) for c in rows.carriers)
    assert {a.id for a in rows.accounts} == {tenant.account_id}


def test_given_admin_when_explaining_a_number_then_own_plan_and_gateway_in_try_order(api, routed_tenant):
    tenant, _, own, _ = routed_tenant
    admin = api.login(tenant)
    response = admin.get("/api/lcr/explain", query_string={"number": "+44 20 7946 0000"})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["plan"]["id"] == str(own["plan"]) and body["plan"]["level"] == "account"
    assert [a["gatewayId"] for a in body["attempts"]] == [str(own["gateway"])]
    assert body["attempts"][0]["endpoint"] == f"sofia/gateway/{gateway_name(own['gateway'])}/77#442079460000"
    assert body["bridge"].startswith("{fail_on_single_reject=")
    assert body["gatewayHealthKnown"] is True


def test_given_own_gateway_down_when_explaining_then_it_is_skipped_with_reason(api, routed_tenant, redis_client):
    tenant, _, own, _ = routed_tenant
    settings = get_settings()
    health = GatewayHealth(redis_client, settings.redis_key_prefix, lambda *a, **k: None)
    health.set_state(own["gateway"], "down")
    try:
        body = api.login(tenant).get("/api/lcr/explain", query_string={"number": "442079460000"}).get_json()
    finally:
        health.forget(own["gateway"])
    assert body["attempts"] == []
    assert [s["id"] for s in body["skipped"]] == [str(own["gateway"]), str(own["carrier"])]
    assert body["reason"]


def test_given_no_number_when_explaining_then_422_with_error_shape(api, routed_tenant):
    tenant = routed_tenant[0]
    response = api.login(tenant).get("/api/lcr/explain")
    assert response.status_code == 422
    assert set(response.get_json()) >= {"code", "message"}


def test_given_agent_session_when_explaining_then_403(api, seed, routed_tenant):
    tenant = routed_tenant[0]
    seed.user(tenant, "agent1", role="agent")
    response = api.login(tenant, "agent1").get("/api/lcr/explain", query_string={"number": "44"})
    assert response.status_code == 403


def test_given_cli_when_explaining_then_try_order_printed_and_json_matches(routed_tenant):
    from app.cli import main

    tenant, _, own, _ = routed_tenant
    runner = CliRunner()
    text_run = runner.invoke(main, ["lcr", "explain", "442079460000", "--account", tenant.subdomain])
    assert text_run.exit_code == 0, text_run.output
    assert gateway_name(own["gateway"]) in text_run.output and "own-plan" in text_run.output
    json_run = runner.invoke(main, ["lcr", "explain", "sip:bob@example.com", "--account", tenant.subdomain, "--json"])
    assert json_run.exit_code == 1  # unroutable: LCR applies to phone numbers only
    assert json.loads(json_run.output)["reason"].startswith("not a phone number")


def test_given_unknown_subdomain_when_cli_explains_then_error_exit_2():
    from app.cli import main

    result = CliRunner().invoke(main, ["lcr", "explain", "1555", "--account", "no-such-tenant-x"])
    assert result.exit_code == 2
