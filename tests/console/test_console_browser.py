"""The console end to end (issue 22): Debian's chromium driven by playwright-core
(web/e2e/console.test.js, node's test runner) against the real ``sbc api`` process on this run's
database, with axe-core run on every screen and 1280×800 screenshots written to
``$CONSOLE_ARTIFACTS`` (default ``build/console-screenshots``).

This test provisions what the screens need through the REST API (a tenant with every license and
single sign-on at the suite's real OpenID provider (tests/sso), one without ``programmable-voice``,
one without ``api-access`` that requires a second factor, a call flow on an application two
numbers share), starts the API, and runs the node suite; the browser-side assertions are in the node file. Without node,
chromium or web/node_modules it skips, except under CI=true, where that is a failure."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyotp
import pytest
import requests
import soundfile
from sqlalchemy.engine import Engine

from app.accounts.service import create_tenant
from app.api.console import STATIC_DIR
from app.media.storage import recording_file_name
from tests.api_management.records_seed import BASE_TIME, insert_records
from tests.faults.processes import free_port, listening
from tests.media.recorded_calls import seed_recorded_call
from tests.plugins.database import unique_number
from tests.plugins.eventually import eventually
from tests.plugins.node_suite import run_in_own_group
from tests.plugins.skips import skip_or_fail_in_ci
from tests.sso.provider import OidcProviders, missing_reason

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("CONSOLE_ARTIFACTS", ROOT / "build" / "console-screenshots"))
PASSWORD = "console-admin-password-1"
SUITE_TIMEOUT_SECONDS = 300
RECORDS = 60  # more than one page of the console's 50
RECORDING_SECONDS = 2.0
E2E_TESTS = 18  # the tests of web/e2e/console.test.js: all of them must have run
FLOW = json.loads((ROOT / "tests" / "fixtures" / "api" / "call_flows_good.json").read_text())[0]["body"]


def _missing(*, sso: bool = True) -> str | None:
    """Why the browser suites cannot run here; ``sso``: the suite also needs the OpenID provider."""
    if shutil.which("node") is None:
        return "node is not installed (bash scripts/install-system)"
    if not Path(CHROMIUM).exists():
        return f"chromium is not installed at {CHROMIUM} (bash scripts/install-system)"
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        return "web/ has no node_modules (bash scripts/install runs npm ci)"
    if not (STATIC_DIR / "index.html").is_file():
        return "the console is not built (bash scripts/install builds web/)"
    return missing_reason() if sso else None


@pytest.fixture
def oidc() -> Iterator[OidcProviders | None]:
    """The suite's real OpenID provider (one issuer), when the browser suite can run at all."""
    if _missing():
        yield None
        return
    providers = OidcProviders(count=1)
    try:
        yield providers
    finally:
        providers.stop()


@pytest.fixture
def recording_dir(database: str, tmp_path: Path) -> Iterator[Path]:
    """``recording.dir`` for the API process (read at its start); back to the default after."""
    from app.config import get_config, set_value, unset_value

    root = tmp_path / "rec"
    root.mkdir()
    set_value("recording.dir", str(root), announce=False)
    yield root
    unset_value("recording.dir", announce=False)
    get_config().reload()


@contextlib.contextmanager
def serve_api(tmp_path: Path, *, loopback_webhooks: bool = False) -> Iterator[int]:
    """``sbc api`` as a process on this run's database (conftest's environment), its port.
    ``loopback_webhooks``: the development mode that admits hooks on 127.0.0.1 (a suite's own
    hook server); off by default, so the screens show the production refusals."""
    port = free_port()
    log = tmp_path / "api.log"
    env = {k: v for k, v in os.environ.items() if k != "SBC_ALLOW_LOOPBACK_WEBHOOKS"}
    env.update(SBC_BASE_DOMAIN="localhost", PYTHONUNBUFFERED="1")
    if loopback_webhooks:
        env["SBC_ALLOW_LOOPBACK_WEBHOOKS"] = "1"
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "api", "--host", "127.0.0.1", "--port", str(port),
                                 "--no-access-log"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        eventually(lambda: listening(port), timeout=60, interval=0.1, what=f"sbc api on {port}")
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture
def api_port(recording_dir: Path, tmp_path: Path) -> Iterator[int]:
    """``sbc api`` as a process on this run's database (conftest's environment)."""
    with serve_api(tmp_path) as port:
        yield port


class Rest:
    def __init__(self, port: int, subdomain: str, username: str = "admin") -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.headers = {"Host": f"{subdomain}.localhost"}
        body = self.call("POST", "/auth/login", {"username": username, "password": PASSWORD})
        self.headers["Authorization"] = f"Bearer {body['token']}"

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = requests.request(method, self.base + path, json=body, headers=self.headers, timeout=10)
        assert response.status_code < 300, (path, response.status_code, response.text)
        return response.json()

    def put_raw(self, path: str, body: bytes, content_type: str) -> requests.Response:
        return requests.put(self.base + path, data=body, headers={**self.headers, "Content-Type": content_type},
                            timeout=10)


def _mfa_user(port: int, subdomain: str, admin: Rest, username: str = "mfa-admin") -> dict[str, str]:
    """An admin user with a confirmed authenticator (TOTP) second factor: its secret goes to the
    browser test, which computes the code of the next 30 s step (this one is spent by the
    confirmation; the server accepts one step either side)."""
    admin.call("POST", "/api/users", {"username": username, "password": PASSWORD, "role": "admin"})
    user = Rest(port, subdomain, username)
    secret = user.call("POST", "/auth/mfa/totp", {})["secret"]
    user.call("POST", "/auth/mfa/totp/confirm", {"code": pyotp.TOTP(secret).now()})
    return {"username": username, "secret": secret}


def _sso(port: int, subdomain: str, admin: Rest, oidc: OidcProviders) -> dict[str, str]:
    """Single sign-on at the real provider, its redirect the console's own callback page:
    the provider's ``sbc-admins`` group is an admin here."""
    redirect = f"http://{subdomain}.localhost:{port}/console/login/sso"
    client_id, secret = oidc.register_client(oidc.issuers[0], [redirect])
    admin.call("PUT", "/api/account/sso", {
        "issuer": oidc.issuers[0], "client_id": client_id, "client_secret": secret, "display_name": "Example IdP",
        "role_claim": "groups", "role_mapping": [{"value": "sbc-admins", "role": "admin"}], "create_users": True})
    return {"displayName": "Example IdP", "login": "alice", "issuer": oidc.issuers[0]}


def _strict_tenant(port: int) -> dict[str, str]:
    """A tenant without ``api-access`` that requires a second factor, and a supervisor who has
    none yet: their sign-in is the enrolment."""
    subdomain, _, admin = _tenant(port, ["queue-mgmt"])
    admin.call("POST", "/api/users", {"username": "newcomer", "password": PASSWORD, "role": "supervisor"})
    admin.call("PUT", "/api/account/mfa", {"required": True})
    return {"subdomain": subdomain, "username": "newcomer"}


def _calls(account_id: uuid.UUID, owner_engine: Engine, recording_dir: Path) -> dict[str, Any]:
    """60 inbound records with their interaction summaries (two pages of 50), and one outbound
    call with a 2.0 s recording and a transcript, as the media workers leave them."""
    insert_records(owner_engine, account_id, RECORDS, with_summary=True)
    path = recording_dir / recording_file_name(account_id, uuid.uuid4(), "wav")
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(int(RECORDING_SECONDS * 8000)) / 8000) * 32767).astype(np.int16)
    soundfile.write(path, np.stack([tone, tone], axis=1), 8000, format="WAV")
    call = seed_recorded_call(account_id, path, recording_ms=int(RECORDING_SECONDS * 1000), direction="outbound",
                              started_at=BASE_TIME + timedelta(minutes=5), from_number="15550001",
                              to_number="15550002", talk_ms=2000, duration_ms=2500)
    return {"records": RECORDS + 1, "recorded": str(call.public_id), "recordingSeconds": RECORDING_SECONDS}


def _tenant(port: int, licenses: list[str]) -> tuple[str, uuid.UUID, Rest]:
    subdomain = f"con-{uuid.uuid4().hex[:10]}"
    account = create_tenant(subdomain, "admin", PASSWORD, licenses, bcrypt_rounds=4)
    return subdomain, account.id, Rest(port, subdomain)


@pytest.mark.timeout(SUITE_TIMEOUT_SECONDS + 60)
def test_the_console_works_in_chromium_against_the_real_api_with_no_accessibility_violation(
        api_port: int, owner_engine: Engine, recording_dir: Path, oidc: OidcProviders | None) -> None:
    missing = _missing()
    if missing or oidc is None:
        skip_or_fail_in_ci(f"console browser tests: {missing}")
    assert oidc is not None
    full, account_id, admin = _tenant(api_port, ["api-access", "queue-mgmt", "programmable-voice"])
    flow = admin.call("POST", "/api/call-flows", FLOW)
    shared = admin.call("POST", "/api/applications", {"name": "Main line", "call_flow_sid": flow["id"]})
    numbers = [admin.call("POST", "/api/phone-numbers", {"number": unique_number(), "application_id": shared["id"]})
               for _ in range(2)]
    basic, _, basic_admin = _tenant(api_port, ["api-access"])
    basic_number = basic_admin.call("POST", "/api/phone-numbers", {"number": unique_number()})
    admin.call("POST", "/api/users", {"username": "team-lead", "password": PASSWORD, "role": "supervisor"})
    setup = {
        "port": api_port, "password": PASSWORD, "artifacts": str(ARTIFACTS),
        "full": {"subdomain": full, "sharedNumber": numbers[0], "otherNumber": numbers[1], "flow": flow,
                 "application": shared, "mfa": _mfa_user(api_port, full, admin),
                 "calls": _calls(account_id, owner_engine, recording_dir),
                 "sso": _sso(api_port, full, admin, oidc), "lostDevice": _mfa_user(api_port, full, admin, "lost-phone"),
                 "supervisor": "team-lead"},
        "basic": {"subdomain": basic, "number": basic_number},
        "strict": _strict_tenant(api_port),
    }
    output = run_e2e("e2e/console.test.js", setup, E2E_TESTS, SUITE_TIMEOUT_SECONDS)
    # the other number kept the shared application: the split touched only the edited number
    other = admin.call("GET", f"/api/phone-numbers/{numbers[1]['id']}")
    assert other["application_id"] == shared["id"] and other["answering_mode"] == "call_flow"
    print("\n".join(line for line in output.splitlines() if line.startswith("# ")))


def run_e2e(suite: str, setup: dict[str, Any], tests: int, timeout: float) -> str:
    """The node suite ``suite`` (under web/) with ``setup`` in $CONSOLE_E2E; every one of its
    ``tests`` must have run and passed. Returns its output."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CONSOLE_E2E=json.dumps(setup), CHROMIUM=CHROMIUM)
    returncode, output = run_in_own_group(["node", "--test", "--test-concurrency=1", suite],
                                          cwd=WEB, env=env, timeout=timeout)
    assert returncode == 0, f"{suite} failed:\n" + output[-10000:]
    counts = dict(line[2:].split(" ", 1) for line in output.splitlines()
                  if line.startswith(("# tests ", "# pass ", "# fail ")))
    assert counts == {"tests": str(tests), "pass": str(tests), "fail": "0"}, output[-4000:]
    return output
