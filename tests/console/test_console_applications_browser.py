"""The console's Applications screen and visual call-flow editor end to end (issue 22): Debian's
chromium driven by playwright-core (web/e2e/applications.test.js) against the real ``sbc api``,
with axe-core on every screen and 1280×800 screenshots, as tests/console/test_console_browser.py
does for the other screens.

The API runs in the development mode that admits hooks on loopback
(``SBC_ALLOW_LOOPBACK_WEBHOOKS=1``), so "Try it" reaches the node suite's own hook server on
127.0.0.1; the production refusal of a private address is still shown (10.0.0.1)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from tests.console import test_console_browser as base
from tests.plugins.node_suite import run_in_own_group
from tests.plugins.skips import skip_or_fail_in_ci

E2E_TESTS = 4  # the tests of web/e2e/applications.test.js: all of them must have run


@pytest.fixture
def loopback_api_port(database: str, tmp_path: Path) -> Iterator[int]:
    with base.serve_api(tmp_path, loopback_webhooks=True) as port:
        yield port


@pytest.mark.timeout(base.SUITE_TIMEOUT_SECONDS + 60)
def test_applications_and_the_flow_editor_work_in_chromium_against_the_real_api_with_no_accessibility_violation(
        loopback_api_port: int) -> None:
    missing = base._missing(sso=False)
    if missing:
        skip_or_fail_in_ci(f"console browser tests: {missing}")
    subdomain, _, admin = base._tenant(loopback_api_port, ["programmable-voice"])
    setup = {"port": loopback_api_port, "password": base.PASSWORD, "artifacts": str(base.ARTIFACTS),
             "subdomain": subdomain}
    base.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CONSOLE_E2E=json.dumps(setup), CHROMIUM=base.CHROMIUM)
    returncode, output = run_in_own_group(["node", "--test", "--test-concurrency=1", "e2e/applications.test.js"],
                                          cwd=base.WEB, env=env, timeout=base.SUITE_TIMEOUT_SECONDS)
    assert returncode == 0, "console applications e2e failed:\n" + output[-10000:]
    counts = dict(line[2:].split(" ", 1) for line in output.splitlines()
                  if line.startswith(("# tests ", "# pass ", "# fail ")))
    assert counts == {"tests": str(E2E_TESTS), "pass": str(E2E_TESTS), "fail": "0"}, output[-4000:]
    # what the browser saved is what the flow engine runs: the application answers with the flow
    apps = admin.call("GET", "/api/applications")["items"]
    flows = admin.call("GET", "/api/call-flows")["items"]
    ivr = next(f for f in flows if f["name"] == "IVR")
    assert next(a for a in apps if a["name"] == "Developer app")["call_flow_sid"] == ivr["id"]
    assert ivr["definition"]["nodes"]["menu"]["branches"] == {"1": "sales", "sales": "sales"}
    print("\n".join(line for line in output.splitlines() if line.startswith("# ")))
