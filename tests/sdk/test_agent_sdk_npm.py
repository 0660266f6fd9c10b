"""The agent SDK's own test suite (sdk/agent-js, ``npm test``: node's test runner) as part of
the project's single test command. Its tests start tests/sdk/harness.py themselves (the real
API, controller and workers on the ESL simulator, private database/Redis prefix/vhost).

Without node or the SDK's node_modules the test skips with one line, except under CI=true,
where that is a failure (like the real-switch suite): CI must never pass without the SDK.
The browser test is tests/realswitch/test_agent_sdk_browser.py (it needs the real switch)."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.plugins.node_suite import run_in_own_group
from tests.plugins.skips import skip_or_fail_in_ci
from tests.sso.provider import missing_reason as provider_missing

SDK = Path(__file__).resolve().parents[2] / "sdk" / "agent-js"
SUITE_TIMEOUT_SECONDS = 900  # three harness start-ups and ~25 tests; ~2 min on an idle machine


def _missing() -> str | None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node/npm are not installed (bash scripts/install-system)"
    if not (SDK / "node_modules" / "ws").is_dir():
        return "sdk/agent-js has no node_modules (bash scripts/install runs npm ci)"
    return provider_missing()  # the SDK's single sign-on test signs in at the suite's OpenID provider


@pytest.mark.timeout(SUITE_TIMEOUT_SECONDS + 60)
def test_the_agent_sdk_suite_passes_against_the_real_api_and_agent_channel() -> None:
    missing = _missing()
    if missing:
        skip_or_fail_in_ci(f"agent SDK tests: {missing}")
    env = dict(os.environ, SBC_PYTHON=sys.executable)
    # its own process group: on a timeout the node runner, its harnesses and their product
    # processes all go (a harness also stops by itself when its stdin closes)
    returncode, output = run_in_own_group(["npm", "test", "--silent"], cwd=SDK, env=env,
                                          timeout=SUITE_TIMEOUT_SECONDS)
    summary = [line for line in output.splitlines() if line.startswith("# ")][-8:]
    # the failing subtests by name first: the tail alone may not reach back to them
    failing = "\n".join(line.strip() for line in output.splitlines() if "not ok" in line)
    assert returncode == 0, f"npm test failed:\n{failing}\n" + output[-8000:]
    print("\n".join(summary))
