"""The console's Carriers and LCR screens end to end (issue 22): Debian's chromium driven by
playwright-core (web/e2e/routing.test.js) against the real ``sbc api``, with axe-core on every
screen and 1280×800 screenshots, as tests/console/test_console_browser.py does for the other
screens (its API process and tenant helpers are reused).

Provisioned through the REST API: two carriers with gateways and an LCR plan whose routes
overlap (``^44`` before ``^4``), so reordering them changes what "Explain this number" answers.
One outbound gateway is marked down in the live health store (the hash FreeSWITCH's
``sofia::gateway_state`` events fill, docs/trunks.md "Gateway health"), so the screens show a
down gateway and the explanation skips it. A gateway's change then arrives as the controller
publishes it (``system.gateway.down``/``.registration`` through the product's outbox publisher,
tests/console/bus_publish.py) and is pushed to the open page."""
from __future__ import annotations

import json
import os
import sys
from typing import Iterator

import pytest
import redis

from tests.console import test_console_browser as base
from tests.plugins.node_suite import run_in_own_group
from tests.plugins.skips import skip_or_fail_in_ci

# the API process of the other console suite (its fixtures, registered here under their names)
recording_dir = base.recording_dir
api_port = base.api_port

E2E_TESTS = 4  # the tests of web/e2e/routing.test.js: all of them must have run


@pytest.fixture
def routing_api_port(amqp_vhost: str, api_port: int) -> int:
    """The API with this run's RabbitMQ vhost made first: the gateway events reach its stream."""
    return api_port


@pytest.fixture
def down_gateways(redis_client: redis.Redis, redis_prefix: str) -> Iterator[list[str]]:
    """Gateway ids to mark down in the live health store; removed again after the test."""
    marked: list[str] = []
    yield marked
    if marked:
        redis_client.hdel(f"{redis_prefix}gateway:state", *marked)


def _routing(admin: base.Rest, redis_client: redis.Redis, redis_prefix: str, down: list[str]) -> dict:
    acme = admin.call("POST", "/api/carriers", {"name": "Acme Telecom", "tech_prefix": "77#"})
    acme_out = admin.call("POST", f"/api/carriers/{acme['id']}/gateways", {"ipv4": "203.0.113.10"})
    acme_in = admin.call("POST", f"/api/carriers/{acme['id']}/gateways",
                         {"ipv4": "198.51.100.0", "netmask": 24, "outbound": False})
    backup = admin.call("POST", "/api/carriers", {"name": "Backup Carrier", "e164_leading_plus": True})
    backup_out = admin.call("POST", f"/api/carriers/{backup['id']}/gateways", {"ipv4": "203.0.113.20", "port": 5080})
    plan = admin.call("POST", "/api/lcr", {"name": "Main plan", "priority": 10})
    routes = [admin.call("POST", f"/api/lcr/{plan['id']}/routes", {"regex": regex, "priority": priority,
                                                                    "description": description})
              for regex, priority, description in (("^44", 10, "UK"), ("^1", 20, "North America"),
                                                   ("^4", 30, "Europe"))]
    for route in (routes[0], routes[2]):
        admin.call("POST", f"/api/lcr/routes/{route['id']}/carriers", {"carrier_id": acme["id"], "priority": 0})
        admin.call("POST", f"/api/lcr/routes/{route['id']}/carriers", {"carrier_id": backup["id"], "priority": 1})
    redis_client.hset(f"{redis_prefix}gateway:state", acme_out["id"], "down")
    down.append(acme_out["id"])
    return {"acme": acme, "acmeOut": acme_out, "acmeIn": acme_in, "backup": backup, "backupOut": backup_out,
            "plan": plan, "routes": routes}


@pytest.mark.timeout(base.SUITE_TIMEOUT_SECONDS + 60)
def test_carriers_and_lcr_work_in_chromium_against_the_real_api_with_no_accessibility_violation(
        routing_api_port: int, redis_client: redis.Redis, redis_prefix: str,
        down_gateways: list[str]) -> None:
    api_port = routing_api_port
    missing = base._missing()
    if missing:
        skip_or_fail_in_ci(f"console browser tests: {missing}")
    # queue-mgmt: the live stream's ticket, over which the carrier page gets its gateways' changes
    subdomain, _, admin = base._tenant(api_port, ["api-access", "queue-mgmt"])
    setup = {"port": api_port, "password": base.PASSWORD, "artifacts": str(base.ARTIFACTS),
             "python": sys.executable, "root": str(base.ROOT),
             "subdomain": subdomain, "routing": _routing(admin, redis_client, redis_prefix, down_gateways)}
    base.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CONSOLE_E2E=json.dumps(setup), CHROMIUM=base.CHROMIUM)
    returncode, output = run_in_own_group(["node", "--test", "--test-concurrency=1", "e2e/routing.test.js"],
                                          cwd=base.WEB, env=env, timeout=base.SUITE_TIMEOUT_SECONDS)
    assert returncode == 0, "console routing e2e failed:\n" + output[-10000:]
    counts = dict(line[2:].split(" ", 1) for line in output.splitlines()
                  if line.startswith(("# tests ", "# pass ", "# fail ")))
    assert counts == {"tests": str(E2E_TESTS), "pass": str(E2E_TESTS), "fail": "0"}, output[-4000:]
    # the order the browser left is the router's: ^44, ^1, ^4 after a drag and a move back
    routes = admin.call("GET", f"/api/lcr/{setup['routing']['plan']['id']}/routes")
    assert [r["regex"] for r in routes] == ["^44", "^1", "^4"]
    print("\n".join(line for line in output.splitlines() if line.startswith("# ")))
