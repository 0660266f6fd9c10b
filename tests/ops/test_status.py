"""``sbc status``: one screen from the sources of truth — switches asked over their event socket
(the simulator, and a port where nothing listens), services from their heartbeats in the outbox,
the outbox backlog, and live calls per account from the limiter's Redis slots."""
from __future__ import annotations

import json
import os
import socket

import pytest
from click.testing import CliRunner
from sqlalchemy import delete

from app.calls.heartbeat import ServiceHeartbeat
from app.calls.limiter import ConcurrencyLimiter
from app.cli import main
from app.config import set_value
from app.db.engine import platform_session
from app.models import ClusterConfig


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def nodes(inbound_sim):
    host, port = inbound_sim.address
    dead = _dead_port()
    set_value("freeswitch.nodes", [{"host": host, "port": port, "password": "ClueCon"},
                                   {"host": "127.0.0.1", "port": dead, "password": "ClueCon"}], announce=False)
    yield f"{host}:{port}", f"127.0.0.1:{dead}"
    with platform_session() as s:
        s.execute(delete(ClusterConfig).where(ClusterConfig.key == "freeswitch.nodes"))


def test_given_switches_services_and_calls_when_status_runs_then_one_screen_shows_each(
        nodes, inbound_sim, make_account, redis_client):
    live, dead = nodes
    inbound_sim.loaded_modules.discard("mod_flite")
    beat = ServiceHeartbeat("controller", details=lambda: {
        "liveCalls": 2, "switches": {live: {"connected": True, "reconnects": 0}}})
    beat.start()
    account = make_account()
    limiter = ConcurrencyLimiter(redis_client)
    for call in ("c1", "c2"):
        assert limiter.acquire(call, account.id, 0).admitted
    try:
        result = CliRunner().invoke(main, ["status"])
        screen = result.output
        assert f"{live:<22} connected  version 1.10.12-release  channels 0  missing modules: mod_flite" in screen
        assert f"{dead:<22} UNREACHABLE" in screen
        mine = [line for line in screen.splitlines() if "live calls 2  switches 1/1 connected" in line]
        assert len(mine) == 1 and mine[0].split()[:2] == ["controller", "up"] and f"[{os.getpid()}]" in mine[0]
        assert "OUTBOX  " in screen and " unpublished, oldest " in screen
        assert f"  {account.subdomain:<30} 2" in screen
        assert result.exit_code == 0  # one switch answers
        as_json = json.loads(CliRunner().invoke(main, ["status", "--json"]).output)
        assert {s["node"]: s["connected"] for s in as_json["switches"]} == {live: True, dead: False}
        assert as_json["calls_by_account"][account.subdomain] == 2
    finally:
        limiter.release("c1", "c2")
        beat.stop()


def test_given_a_stopped_service_when_status_runs_then_it_is_shown_down(nodes):
    beat = ServiceHeartbeat("workers")
    beat.start()
    beat.stop()
    shown = json.loads(CliRunner().invoke(main, ["status", "--json"]).output)["services"]
    (mine,) = [s for s in shown if s["instance"] == beat.instance_id]
    assert (mine["service"], mine["state"], mine["pid"]) == ("workers", "down", os.getpid())


def test_given_no_switch_answering_when_status_runs_then_it_exits_non_zero(inbound_sim):
    set_value("freeswitch.nodes", [{"host": "127.0.0.1", "port": _dead_port(), "password": "x"}], announce=False)
    try:
        result = CliRunner().invoke(main, ["status"])
        assert result.exit_code == 1 and "UNREACHABLE" in result.output
    finally:
        with platform_session() as s:
            s.execute(delete(ClusterConfig).where(ClusterConfig.key == "freeswitch.nodes"))


def test_given_postgresql_and_redis_unreachable_when_status_runs_then_it_still_answers_and_exits_1():
    import subprocess
    import sys

    dead = _dead_port()
    env = {**os.environ, "SBC_PLATFORM_DATABASE_URL": f"postgresql://sbc_platform@127.0.0.1:{dead}/sbc",
           "SBC_REDIS_URL": f"redis://127.0.0.1:{dead}/0"}
    result = subprocess.run([sys.executable, "-m", "app.cli", "status"], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "SWITCHES" in result.stdout and "OUTBOX  unknown" in result.stdout
    assert "ERROR  PostgreSQL (cluster_config, defaults used):" in result.stdout
    assert "ERROR  Redis:" in result.stdout


def test_given_agent_phones_registering_when_status_runs_then_it_shows_counts_per_transport_and_the_latest_changes(
        nodes):
    import uuid

    from app.contact.registrations import RegistrationStore
    from app.contact.states import default_presence

    store = RegistrationStore(default_presence())
    domain = f"st{uuid.uuid4().hex[:6]}"
    store.registered(domain, "alice", 300, contact="<sip:alice@192.0.2.5:5062>", transport="tcp",
                     user_agent="baresip v1.0.0")
    store.registered(domain, "bob", 300, contact="<sip:bob@192.0.2.6>", transport="wss", user_agent="JsSIP")
    store.unregistered(domain, "bob")

    screen = CliRunner().invoke(main, ["status"]).output
    assert "AGENT REGISTRATIONS  registered now: " in screen and "tcp " in screen
    [alice] = [line for line in screen.splitlines() if f"alice@{domain}" in line]
    assert "registered tcp  <sip:alice@192.0.2.5:5062>  baresip v1.0.0  expires in " in alice
    [bob] = [line for line in screen.splitlines() if f"bob@{domain}" in line]
    assert "unregistered  last contact <sip:bob@192.0.2.6>" in bob
    shown = json.loads(CliRunner().invoke(main, ["status", "--json"]).output)
    latest = shown["registration_changes"][0]
    assert (latest["agent"], latest["registered"], latest["user_agent"]) == (f"bob@{domain}", False, "JsSIP")
    assert shown["registered_by_transport"]["tcp"] >= 1


def test_given_a_gateway_registering_to_its_carrier_when_status_runs_then_its_state_and_reply_are_shown(nodes):
    import uuid

    from app.redis_pool import shared_redis
    from app.routing.gateway_registration import GatewayRegistrations
    from app.settings import get_settings

    settings = get_settings()
    gateway_id = uuid.uuid4()
    GatewayRegistrations(shared_redis(settings.redis_url), settings.redis_key_prefix,
                         lambda *a, **k: None).set_state(gateway_id, "gw", "FAIL_WAIT", "403", "Forbidden")
    screen = CliRunner().invoke(main, ["status"]).output
    assert "GATEWAY REGISTRATIONS" in screen
    [line] = [line for line in screen.splitlines() if str(gateway_id) in line]
    assert "FAIL_WAIT" in line and line.endswith("403 Forbidden")
