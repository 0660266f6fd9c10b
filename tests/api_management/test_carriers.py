"""/api/carriers and gateways: CIDR rules, encrypted REGISTER password, platform carriers
read-only, routing.config.changed announced through the outbox, tenant isolation."""
from __future__ import annotations

import json
import uuid

import pytest
import redis
from sqlalchemy import text

from app.api.carriers.service import with_health
from app.models import Carrier, Gateway
from tests.api_management.helpers import admin_client, assert_error, cases, insert
from tests.faults.processes import free_port
from tests.plugins.database import set_tenant


def _carrier(admin, name="Carrier") -> dict:
    response = admin.post("/api/carriers", json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _routing_events(owner_engine, account_id) -> list[dict]:
    with owner_engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT exchange, routing_key, body FROM event_outbox WHERE routing_key = 'routing.config.changed' "
            "AND body::text LIKE :acct ORDER BY created_at"), {"acct": f"%{account_id}%"}).mappings().all()
    return [dict(r) for r in rows]


def test_given_a_carrier_with_gateways_when_created_then_they_read_back(api, seed):
    _, admin = admin_client(api, seed)
    carrier = _carrier(admin, "Acme Telecom")
    assert carrier["platform"] is False and carrier["is_active"] is True
    exact = admin.post(f"/api/carriers/{carrier['id']}/gateways", json={"ipv4": "203.0.113.10"})
    assert exact.status_code == 201, exact.get_json()
    body = exact.get_json()
    assert (body["netmask"], body["port"], body["transport"], body["inbound"], body["outbound"]) == (32, 5060, "udp", True, True)
    assert body["network"] == "203.0.113.10/32"
    cidr = admin.post(f"/api/carriers/{carrier['id']}/gateways",
                      json={"ipv4": "198.51.100.0", "netmask": 24, "outbound": False, "transport": "tcp"}).get_json()
    assert cidr["network"] == "198.51.100.0/24"
    listed = admin.get(f"/api/carriers/{carrier['id']}/gateways").get_json()
    assert [g["id"] for g in listed] == [body["id"], cidr["id"]]


@pytest.mark.parametrize("case", cases("gateways_bad.json"))
def test_given_an_invalid_gateway_when_saved_then_422_names_the_field(api, seed, case):
    _, admin = admin_client(api, seed)
    carrier = _carrier(admin)
    body = assert_error(admin.post(f"/api/carriers/{carrier['id']}/gateways", json=case["body"]), 422, case["code"])
    assert case["field"] in json.dumps(body["details"])


def test_given_a_register_password_when_saved_then_it_is_encrypted_and_never_returned(api, seed, owner_engine):
    _, admin = admin_client(api, seed)
    carrier = _carrier(admin)
    created = admin.post(f"/api/carriers/{carrier['id']}/gateways", json={
        "ipv4": "203.0.113.20", "register_username": "trunk1", "register_password": "reg-pass-9911"})
    body = created.get_json()
    assert body["has_register_password"] is True and "reg-pass-9911" not in created.get_data(as_text=True)
    assert "reg-pass-9911" not in admin.get(f"/api/gateways/{body['id']}").get_data(as_text=True)
    with owner_engine.connect() as conn:
        stored = conn.execute(text("SELECT register_password_encrypted FROM gateways WHERE id = :i"),
                              {"i": body["id"]}).scalar()
    assert stored and "reg-pass-9911" not in stored


def test_given_a_gateway_when_patching_then_rules_apply_to_the_merged_values(api, seed):
    _, admin = admin_client(api, seed)
    carrier = _carrier(admin)
    gw = admin.post(f"/api/carriers/{carrier['id']}/gateways", json={"ipv4": "203.0.113.0", "netmask": 32}).get_json()
    assert_error(admin.patch(f"/api/gateways/{gw['id']}", json={"netmask": 24}), 422, "invalid_gateway")
    changed = admin.patch(f"/api/gateways/{gw['id']}", json={"netmask": 24, "outbound": False})
    assert changed.status_code == 200 and changed.get_json()["network"] == "203.0.113.0/24"
    assert admin.delete(f"/api/gateways/{gw['id']}").status_code == 204
    assert_error(admin.get(f"/api/gateways/{gw['id']}"), 404, "gateway_not_found")


def test_given_carrier_and_gateway_changes_when_committed_then_routing_config_changed_is_queued(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    carrier = _carrier(admin)
    gw = admin.post(f"/api/carriers/{carrier['id']}/gateways", json={"ipv4": "203.0.113.30"}).get_json()
    admin.patch(f"/api/carriers/{carrier['id']}", json={"is_active": False})
    admin.delete(f"/api/gateways/{gw['id']}")
    events = _routing_events(owner_engine, tenant.account_id)
    assert [e["exchange"] for e in events] == ["system.events"] * 4
    assert [json.dumps(e["body"]).count(i) > 0 for e, i in zip(events, [carrier["id"], gw["id"], carrier["id"], gw["id"]])] == [True] * 4
    # a refused change queues nothing
    before = len(events)
    admin.post(f"/api/carriers/{carrier['id']}/gateways", json={"ipv4": "224.0.0.1"})
    assert len(_routing_events(owner_engine, tenant.account_id)) == before


def test_given_a_platform_carrier_when_a_tenant_reads_or_changes_it_then_read_only(api, seed, owner_engine):
    _, admin = admin_client(api, seed)
    platform = Carrier(id=uuid.uuid4(), account_id=None, name=f"platform-{uuid.uuid4().hex[:6]}")
    insert(owner_engine, platform, Gateway(id=uuid.uuid4(), account_id=None, carrier_id=platform.id, ipv4="192.0.2.1"))
    listed = admin.get("/api/carriers?limit=200").get_json()["items"]
    assert any(c["id"] == str(platform.id) and c["platform"] for c in listed)
    assert admin.get(f"/api/carriers/{platform.id}").get_json()["platform"] is True
    assert_error(admin.patch(f"/api/carriers/{platform.id}", json={"name": "mine"}), 403, "platform_read_only")
    assert_error(admin.delete(f"/api/carriers/{platform.id}"), 403, "platform_read_only")
    assert_error(admin.post(f"/api/carriers/{platform.id}/gateways", json={"ipv4": "203.0.113.1"}), 403, "platform_read_only")
    assert_error(admin.get(f"/api/carriers/{platform.id}/gateways"), 404, "carrier_not_found")


def test_given_another_tenants_carrier_and_gateway_when_accessed_then_404(api, seed, app_role_conn):
    tenant_a, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    carrier = _carrier(admin_a)
    gw = admin_a.post(f"/api/carriers/{carrier['id']}/gateways", json={"ipv4": "203.0.113.40"}).get_json()
    for response in (admin_b.get(f"/api/carriers/{carrier['id']}"),
                     admin_b.patch(f"/api/carriers/{carrier['id']}", json={"name": "x"}),
                     admin_b.delete(f"/api/carriers/{carrier['id']}"),
                     admin_b.get(f"/api/carriers/{carrier['id']}/gateways"),
                     admin_b.post(f"/api/carriers/{carrier['id']}/gateways", json={"ipv4": "203.0.113.41"})):
        assert_error(response, 404, "carrier_not_found")
    for response in (admin_b.get(f"/api/gateways/{gw['id']}"),
                     admin_b.patch(f"/api/gateways/{gw['id']}", json={"port": 5080}),
                     admin_b.delete(f"/api/gateways/{gw['id']}")):
        assert_error(response, 404, "gateway_not_found")
    assert carrier["id"] not in json.dumps(admin_b.get("/api/carriers?limit=200").get_json())
    with app_role_conn.begin():
        set_tenant(app_role_conn, tenant_b.account_id)
        assert app_role_conn.execute(text("SELECT count(*) FROM gateways WHERE id = :i"), {"i": gw["id"]}).scalar() == 0
        # and B cannot write into A's carrier even with raw SQL
        changed = app_role_conn.execute(text("UPDATE carriers SET name = 'pwned' WHERE id = :i"), {"i": carrier["id"]})
        assert changed.rowcount == 0


def test_given_an_agent_when_managing_carriers_then_403_admin_required(api, seed):
    tenant = seed.tenant()
    seed.user(tenant, "agent1")
    agent = api.login(tenant, "agent1")
    assert_error(agent.get("/api/carriers"), 403, "admin_required")
    assert_error(agent.post("/api/carriers", json={"name": "x"}), 403, "admin_required")


def test_given_a_tls_registering_gateway_of_an_srtp_carrier_when_saved_then_it_reads_back_without_the_password(api, seed):
    _, admin = admin_client(api, seed)
    carrier = admin.post("/api/carriers", json={"name": "Secure", "srtp": "mandatory"}).get_json()
    assert carrier["srtp"] == "mandatory"
    assert _carrier(admin, "Plain")["srtp"] == "off"
    assert_error(admin.patch(f"/api/carriers/{carrier['id']}", json={"srtp": "sometimes"}), 422, "validation_failed")
    created = admin.post(f"/api/carriers/{carrier['id']}/gateways", json={
        "host": "sip.carrier.example", "port": 5061, "transport": "tls", "register": True,
        "register_username": "acct42", "register_password": "pw-5511", "register_realm": "carrier.example",
        "register_expiry": 300})
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert (body["transport"], body["register"], body["register_expiry"], body["register_retry"]) == ("tls", True, 300, 30)
    assert body["has_register_password"] is True and "pw-5511" not in created.get_data(as_text=True)
    # dropping the password of a registering gateway leaves it without credentials: refused
    assert_error(admin.patch(f"/api/gateways/{body['id']}", json={"register_password": None}), 422, "invalid_gateway")
    assert admin.patch(f"/api/gateways/{body['id']}", json={"register": False}).get_json()["register"] is False


def test_given_live_gateway_health_when_gateways_are_read_then_each_shows_what_the_lcr_sees(
        api, seed, redis_client, redis_prefix):
    _, admin = admin_client(api, seed)
    carrier = _carrier(admin)
    gateways = f"/api/carriers/{carrier['id']}/gateways"
    up = admin.post(gateways, json={"ipv4": "203.0.113.31"}).get_json()
    down = admin.post(gateways, json={"ipv4": "203.0.113.32"}).get_json()
    inbound_only = admin.post(gateways, json={"ipv4": "198.51.100.0", "netmask": 24, "outbound": False}).get_json()
    inactive = admin.post(gateways, json={"ipv4": "203.0.113.33", "is_active": False}).get_json()
    redis_client.hset(f"{redis_prefix}gateway:state", mapping={down["id"]: "down", up["id"]: "up"})
    try:
        listed = {g["id"]: g["health"] for g in admin.get(gateways).get_json()}
        assert listed == {up["id"]: "up", down["id"]: "down", inbound_only["id"]: "not_probed",
                          inactive["id"]: "not_probed"}
        assert admin.get(f"/api/gateways/{down['id']}").get_json()["health"] == "down"
    finally:
        redis_client.hdel(f"{redis_prefix}gateway:state", down["id"], up["id"])


def test_given_the_health_store_unreachable_when_gateways_are_read_then_probed_ones_are_unknown():
    probed = Gateway(id=uuid.uuid4(), is_active=True, outbound=True, inbound=True)
    inbound_only = Gateway(id=uuid.uuid4(), is_active=True, outbound=False, inbound=True)
    closed = redis.Redis(port=free_port(), socket_connect_timeout=1, socket_timeout=1)
    with_health([probed, inbound_only], closed)
    assert (probed.health, inbound_only.health) == ("unknown", "not_probed")
