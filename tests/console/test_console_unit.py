"""The console's unit and component tests (web/, ``npm test``: vitest with jsdom) as part of the
project's single test command. Without node or web/node_modules the test skips with one line,
except under CI=true, where that is a failure (tests/plugins/skips.py)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.plugins.skips import skip_or_fail_in_ci

WEB = Path(__file__).resolve().parents[2] / "web"
TIMEOUT_SECONDS = 240


@pytest.mark.timeout(TIMEOUT_SECONDS + 30)
def test_the_console_unit_and_component_tests_pass() -> None:
    if shutil.which("npm") is None:
        skip_or_fail_in_ci("console unit tests: npm is not installed (bash scripts/install-system)")
    if not (WEB / "node_modules" / "vitest").is_dir():
        skip_or_fail_in_ci("console unit tests: web/ has no node_modules (bash scripts/install runs npm ci)")
    result = subprocess.run(["npm", "test", "--silent", "--", "--reporter=dot", "--no-color"], cwd=WEB,
                            capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                            env=dict(os.environ, NO_COLOR="1"))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]
    ran = re.search(r"Tests\s+(\d+) passed \((\d+)\)", output)
    assert ran and ran.group(1) == ran.group(2) and int(ran.group(1)) > 0, output[-4000:]
    print(ran.group(0))
