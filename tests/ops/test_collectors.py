"""Scrape-time values: outbox backlog and age, agents by state, ESL links and reconnects, and
metrics merged across processes in multi-process mode (PROMETHEUS_MULTIPROC_DIR)."""
from __future__ import annotations

import os
import subprocess
import sys

from prometheus_client import CollectorRegistry
from sqlalchemy import text

from app.events.exchanges import SYSTEM_EVENTS
from app.events.outbox import publish
from app.ops.collectors import DatabaseCollector, GatewayRegistrationCollector, SwitchCollector
from esl.inbound import InboundConnection
from tests.plugins.eventually import eventually


def _scrape(*collectors) -> dict[str, float]:
    registry = CollectorRegistry()
    for collector in collectors:
        registry.register(collector)
    values = {}
    for family in registry.collect():
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return values


def test_given_unpublished_events_then_backlog_and_oldest_age_are_exported(owner_conn):
    before = _scrape(DatabaseCollector())["sbc_outbox_backlog"]
    event_id = publish(SYSTEM_EVENTS, "system.config.changed", {"keys": []})  # no relay runs here
    owner_conn.execute(text("UPDATE event_outbox SET created_at = now() - interval '90 seconds' "
                            "WHERE id = :id"), {"id": event_id})
    owner_conn.commit()
    values = _scrape(DatabaseCollector())
    assert values["sbc_outbox_backlog"] == before + 1
    assert values["sbc_outbox_oldest_unpublished_age_seconds"] >= 90
    owner_conn.execute(text("DELETE FROM event_outbox WHERE id = :id"), {"id": event_id})
    owner_conn.commit()


def test_given_agents_then_they_are_counted_by_state(seed, owner_conn):
    before = _scrape(DatabaseCollector())
    tenant = seed.tenant()
    for name, state in (("a1", "available"), ("a2", "available"), ("a3", "wrap_up")):
        seed.user(tenant, name, role="agent")
        owner_conn.execute(text("INSERT INTO agents (account_id, user_id, state) "
                                "VALUES (:a, :u, :s)"), {"a": tenant.account_id, "u": tenant.users[name].id, "s": state})
    owner_conn.commit()
    after = _scrape(DatabaseCollector())
    assert after["sbc_agents{state=available}"] == before["sbc_agents{state=available}"] + 2
    assert after["sbc_agents{state=wrap_up}"] == before["sbc_agents{state=wrap_up}"] + 1
    assert after["sbc_agents{state=offline}"] == before["sbc_agents{state=offline}"]


def test_given_an_esl_link_that_drops_then_connected_switches_and_reconnects_follow(inbound_sim):
    host, port = inbound_sim.address
    node = InboundConnection(host, port, "ClueCon", backoff_initial=0.05)
    node.connect()
    where = f"{host}:{port}"
    collector = SwitchCollector(lambda: [node], lambda: {where: []})
    try:
        values = _scrape(collector)
        assert values["sbc_esl_connected_switches"] == 1 and values[f"sbc_esl_switch_up{{node={where}}}"] == 1
        inbound_sim.drop_connections()
        eventually(lambda: node.reconnects >= 1, what="the link to the switch reconnected")
        assert _scrape(collector)[f"sbc_esl_reconnects_total{{node={where}}}"] == 1
    finally:
        node.close()
    assert _scrape(collector)["sbc_esl_connected_switches"] == 0


def test_given_multi_process_mode_then_counts_from_several_processes_are_merged(tmp_path):
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    bump = ("from app.ops.metrics import CALLS_FINISHED\n"
            "CALLS_FINISHED.labels('completed', 'inbound').inc()\n")
    for _ in range(2):
        subprocess.run([sys.executable, "-c", bump], env=env, check=True, timeout=60)
    render = "from app.ops.metrics import render\nprint(render()[0].decode())\n"
    out = subprocess.run([sys.executable, "-c", render], env=env, check=True, capture_output=True,
                         text=True, timeout=60).stdout
    assert 'sbc_calls_finished_total{direction="inbound",status="completed"} 2.0' in out


def test_given_registered_agent_phones_then_they_are_counted_per_transport_not_per_agent():
    import uuid

    from app.contact.registrations import TRANSPORTS, RegistrationStore
    from app.contact.states import default_presence
    from app.ops.collectors import RegistrationCollector

    store = RegistrationStore(default_presence())
    before = _scrape(RegistrationCollector(store))
    domain = f"m{uuid.uuid4().hex[:6]}"
    for n in range(3):
        store.registered(domain, f"w{n}", 60, transport="wss")
    store.registered(domain, "u0", 60, transport="udp")
    after = _scrape(RegistrationCollector(store))
    assert after["sbc_agents_registered{transport=wss}"] == before["sbc_agents_registered{transport=wss}"] + 3
    assert after["sbc_agents_registered{transport=udp}"] == before["sbc_agents_registered{transport=udp}"] + 1
    assert {k for k in after if k.startswith("sbc_agents_registered")} == \
        {f"sbc_agents_registered{{transport={t}}}" for t in TRANSPORTS}


def test_given_gateways_registering_to_carriers_then_they_are_counted_per_sofia_state():
    import uuid

    from app.redis_pool import shared_redis
    from app.routing.gateway_registration import SOFIA_REG_STATES, GatewayRegistrations
    from app.settings import get_settings

    settings = get_settings()
    client = shared_redis(settings.redis_url)
    regs = GatewayRegistrations(client, settings.redis_key_prefix, lambda *a, **k: None)
    before = _scrape(GatewayRegistrationCollector(client))
    for state in ("REGED", "REGED", "FAIL_WAIT"):
        regs.set_state(uuid.uuid4(), "gw", state)
    after = _scrape(GatewayRegistrationCollector(client))
    assert after["sbc_gateway_registrations{state=REGED}"] == before["sbc_gateway_registrations{state=REGED}"] + 2
    assert after["sbc_gateway_registrations{state=FAIL_WAIT}"] == \
        before["sbc_gateway_registrations{state=FAIL_WAIT}"] + 1
    assert {k for k in after if k.startswith("sbc_gateway_registrations")} == \
        {f"sbc_gateway_registrations{{state={s}}}" for s in SOFIA_REG_STATES}
