"""/healthz and /readyz on every process: JSON per check, 503 with the failing check named when a
dependency is down (cut with a TCP relay in front of the real service; the machine's services
are never stopped), and every answer bounded in time when a dependency hangs."""
from __future__ import annotations

import dataclasses
import json
import socket
import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

import pytest

from app.config import RuntimeConfig
from app.ops.health import CheckFailed, Readiness, dependency_checks, routing_check
from app.ops.runtime import WorkersRuntime
from app.routing.cache import RoutingCache, RoutingListener, RoutingReloader
from app.settings import get_settings
from app.voice.controller import Controller
from tests.events.tcp_proxy import TcpProxy
from tests.plugins.eventually import eventually

DEPENDENCIES = ("postgresql", "redis", "rabbitmq")


def _via(url: str, proxy: TcpProxy) -> str:
    parts = urlsplit(url)
    auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    return urlunsplit((parts.scheme, f"{auth}127.0.0.1:{proxy.port}", parts.path, parts.query, parts.fragment))


def _upstream(url: str, default_port: int) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or default_port


@pytest.fixture
def proxied(amqp_vhost):
    """Settings whose PostgreSQL, Redis and RabbitMQ are reached through TCP relays to the real
    services; yields (settings, {dependency: proxy})."""
    settings = get_settings()
    proxies = {
        "postgresql": TcpProxy(_upstream(settings.platform_database_url, 5432)).start(),
        "redis": TcpProxy(_upstream(settings.redis_url, 6379)).start(),
        "rabbitmq": TcpProxy(_upstream(settings.amqp_url, 5672)).start(),
    }
    routed = dataclasses.replace(
        settings,
        platform_database_url=_via(settings.platform_database_url, proxies["postgresql"]),
        redis_url=_via(settings.redis_url, proxies["redis"]),
        amqp_url=_via(settings.amqp_url, proxies["rabbitmq"]))
    yield routed, proxies
    for proxy in proxies.values():
        proxy.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port: int, path: str) -> tuple[int, dict | str, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            status, body, ctype = response.status, response.read().decode(), response.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        status, body, ctype = exc.code, exc.read().decode(), exc.headers["Content-Type"]
    return status, (json.loads(body) if ctype.startswith("application/json") else body), ctype


# -- the API process (middleware in front of Flask) -------------------------------------------
def test_given_the_api_when_healthz_is_asked_without_a_tenant_host_or_token_then_alive(api_app):
    response = api_app.test_client().get("/healthz")
    assert response.status_code == 200
    body = response.get_json()
    assert (body["status"], body["process"]) == ("alive", "api") and body["pid"] > 0


def test_given_the_api_and_its_services_up_when_readyz_then_every_check_is_ok(api_app, amqp_vhost):
    response = api_app.test_client().get("/readyz", headers={"Host": "no-such-tenant.localhost"})
    body = response.get_json()
    assert response.status_code == 200, body
    assert body["status"] == "ready" and set(body["checks"]) == set(DEPENDENCIES)
    assert all(c["status"] == "ok" and c["latencyMs"] >= 0 for c in body["checks"].values())


def test_given_the_api_when_an_ops_path_is_posted_then_405_in_the_api_error_shape(api_app):
    response = api_app.test_client().post("/readyz")
    assert response.status_code == 405
    assert response.get_json()["code"] == "method_not_allowed"


# -- each dependency down, through a relay --------------------------------------------------
@pytest.mark.parametrize("down", DEPENDENCIES)
def test_given_a_dependency_refusing_connections_when_readyz_then_503_naming_only_it(proxied, down):
    settings, proxies = proxied
    readiness = Readiness("api", dependency_checks(settings))
    ready, body = readiness.readiness()
    assert ready, body
    proxies[down].refuse()
    proxies[down].reset()
    ready, body = readiness.readiness()
    assert not ready and body["status"] == "not_ready"
    assert {name for name, c in body["checks"].items() if c["status"] == "fail"} == {down}
    assert body["checks"][down]["error"]
    proxies[down].heal()
    assert readiness.readiness()[0]


@pytest.mark.parametrize("down", DEPENDENCIES)
def test_given_a_dependency_that_hangs_when_readyz_then_it_fails_within_the_check_timeout(proxied, down):
    from app import limits

    settings, proxies = proxied
    # a bound well under the drivers' own timeouts (READINESS_CHECK_TIMEOUT_SECONDS), so the
    # error says which one ended the wait
    bound = limits.READINESS_CHECK_TIMEOUT_SECONDS / 4
    readiness = Readiness("workers", dependency_checks(settings), timeout_seconds=bound)
    proxies[down].blackhole()
    proxies[down].reset()
    ready, body = readiness.readiness()
    assert not ready and body["checks"][down]["status"] == "fail"
    assert body["checks"][down]["error"] == f"CheckFailed: no answer within {bound:g} s"


# -- the controller: its own listener, FreeSWITCH in the readiness -------------------------
@pytest.fixture
def controller_with_health(inbound_sim, amqp_vhost, tmp_path, monkeypatch):
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    relay = TcpProxy(inbound_sim.address).start()
    port = _free_port()
    ctl = Controller(RuntimeConfig({
        "freeswitch.nodes": [{"host": "127.0.0.1", "port": relay.port, "password": "ClueCon"}],
        "controller.listen": {"host": "127.0.0.1", "port": 0},
        "health.controller_port": port,
    }))
    ctl.start()
    yield ctl, port, relay
    ctl.stop()
    relay.stop()


def test_given_a_controller_with_its_switch_connected_when_readyz_then_freeswitch_is_ok(controller_with_health):
    ctl, port, _ = controller_with_health
    eventually(lambda: _get(port, "/readyz")[0] == 200, what="/readyz 200")
    status, body, _ = _get(port, "/readyz")
    assert status == 200, body
    assert body["process"] == "controller"
    assert set(body["checks"]) == {*DEPENDENCIES, "freeswitch", "routing"}
    node = f"127.0.0.1:{ctl.nodes[0].port}"
    assert body["checks"]["freeswitch"]["details"] == {node: {"connected": True, "missingModules": []}}
    assert body["checks"]["routing"]["details"] == {"catchUps": 1, "applied": 1}
    assert _get(port, "/healthz")[1]["status"] == "alive"


def test_given_the_switch_unreachable_when_readyz_then_503_with_freeswitch_failing(controller_with_health):
    ctl, port, relay = controller_with_health
    eventually(lambda: _get(port, "/readyz")[0] == 200, what="/readyz 200")
    relay.refuse()
    relay.reset()
    eventually(lambda: not ctl.nodes[0].connected, what="the switch link lost")
    status, body, _ = _get(port, "/readyz")
    assert status == 503
    assert body["checks"]["freeswitch"]["status"] == "fail"
    assert "no FreeSWITCH connected" in body["checks"]["freeswitch"]["error"]
    assert all(body["checks"][d]["status"] == "ok" for d in DEPENDENCIES)
    relay.heal()
    eventually(lambda: _get(port, "/readyz")[0] == 200, timeout=20, what="/readyz 200 again")


def test_given_a_switch_missing_a_module_when_readyz_then_503_naming_the_module(controller_with_health, inbound_sim):
    ctl, port, relay = controller_with_health
    eventually(lambda: _get(port, "/readyz")[0] == 200, what="/readyz 200")
    inbound_sim.loaded_modules.discard("mod_flite")
    relay.reset()  # the reconnect runs the module check again
    eventually(lambda: ctl.missing_modules.get(f"127.0.0.1:{relay.port}") == ["mod_flite"], timeout=20,
               what="mod_flite reported missing")
    status, body, _ = _get(port, "/readyz")
    assert status == 503
    assert body["checks"]["freeswitch"]["details"][f"127.0.0.1:{relay.port}"]["missingModules"] == ["mod_flite"]


def test_given_a_routing_listener_not_bound_yet_when_checked_then_routing_is_not_ready(tmp_path):
    listener = RoutingListener(RoutingReloader(RoutingCache(), tmp_path, lambda: []))  # never started
    with pytest.raises(CheckFailed, match="not bound"):
        routing_check(lambda: listener)()
    with pytest.raises(CheckFailed, match="not bound"):
        routing_check(lambda: None)()


# -- the workers -------------------------------------------------------------------------------
def test_given_workers_running_when_asked_then_healthz_readyz_and_metrics_answer(amqp_vhost):
    port = _free_port()
    runtime = WorkersRuntime(RuntimeConfig({"health.workers_port": port})).start()
    try:
        assert _get(port, "/healthz")[1]["process"] == "workers"
        status, body, _ = _get(port, "/readyz")
        assert status == 200 and set(body["checks"]) == set(DEPENDENCIES), body
        status, text, ctype = _get(port, "/metrics")
        assert status == 200 and ctype.startswith("text/plain")
        assert "sbc_outbox_backlog " in text and 'sbc_agents{state="available"}' in text
        assert _get(port, "/nope")[0] == 404
    finally:
        runtime.stop()


def test_given_the_health_port_taken_when_a_controller_starts_then_it_still_serves_calls(
        inbound_sim, amqp_vhost, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    host, esl_port = inbound_sim.address
    ctl = Controller(RuntimeConfig({
        "freeswitch.nodes": [{"host": host, "port": esl_port, "password": "ClueCon"}],
        "controller.listen": {"host": "127.0.0.1", "port": 0},
        "health.controller_port": taken.getsockname()[1]}))
    try:
        ctl.start()
        assert ctl.ops_server is None and ctl.server.address[1] > 0
        assert "cannot listen for /healthz /readyz /metrics" in caplog.text
    finally:
        ctl.stop()
        taken.close()
