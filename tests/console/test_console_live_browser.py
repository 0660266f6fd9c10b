"""The console's live view and Queues screens end to end (issue 22): Debian's chromium through
playwright-core (web/e2e/live.test.js) against the real ``sbc api`` process on this run's
database and RabbitMQ vhost, axe-core on every screen, screenshots as the other console tests.

Bus events are published by tests/console/bus_publish.py, a child process of the node suite,
through the product's outbox publisher. Two tenants each have a queue named ``Sales``: callers
queued in the other tenant's line, and its events, must never reach this tenant's page.
Without node, chromium or web/node_modules it skips, except under CI=true."""
from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from app.accounts.service import create_tenant
from tests.console.test_console_browser import (  # noqa: F401  (fixtures)
    ARTIFACTS,
    PASSWORD,
    ROOT,
    Rest,
    _missing,
    api_port,
    recording_dir,
    run_e2e,
)
from tests.plugins.skips import skip_or_fail_in_ci

SUITE_TIMEOUT_SECONDS = 240
E2E_TESTS = 5  # the tests of web/e2e/live.test.js: all of them must have run
MOH_WAV = ROOT / "tests" / "fixtures" / "moh" / "tone-660hz-16k-stereo.wav"


@pytest.fixture
def moh_dir(database: str, tmp_path: Path) -> Iterator[Path]:
    """``moh.dir`` for the API process (read at its start); back to the default after."""
    from app.config import get_config, set_value, unset_value

    root = tmp_path / "moh"
    set_value("moh.dir", str(root), announce=False)
    yield root
    unset_value("moh.dir", announce=False)
    get_config().reload()


@pytest.fixture
def live_api_port(moh_dir: Path, amqp_vhost: str, api_port: int) -> int:  # noqa: F811
    return api_port


def _tenant(port: int) -> tuple[str, uuid.UUID, Rest]:
    subdomain = f"live-{uuid.uuid4().hex[:10]}"
    account = create_tenant(subdomain, "admin", PASSWORD, ["api-access", "queue-mgmt"], bcrypt_rounds=4)
    return subdomain, account.id, Rest(port, subdomain)


@pytest.mark.timeout(SUITE_TIMEOUT_SECONDS + 60)
def test_the_live_view_and_queues_work_in_chromium_with_pushed_events_and_no_other_tenants(
        live_api_port: int) -> None:
    missing = _missing()
    if missing:
        skip_or_fail_in_ci(f"console browser tests: {missing}")
    mine, my_account, admin = _tenant(live_api_port)
    theirs, their_account, their_admin = _tenant(live_api_port)
    my_queue = admin.call("POST", "/api/queues", {"name": "Sales"})
    their_queue = their_admin.call("POST", "/api/queues", {"name": "Sales"})
    admin.call("POST", "/api/users", {"username": "agent1", "password": PASSWORD, "role": "agent"})
    admin.call("POST", "/api/users", {"username": "sup1", "password": PASSWORD, "role": "supervisor"})
    users = admin.call("GET", "/api/users")["items"]
    agent_user = next(u for u in users if u["username"] == "agent1")
    admin.call("POST", "/api/agents", {"user_id": agent_user["id"], "contact": "user/1001"})
    callback = admin.call("POST", f"/api/queues/{my_queue['id']}/callbacks", {"phone_number": "15550007777"})
    upload = admin.put_raw("/api/moh/lobby", MOH_WAV.read_bytes(), "audio/wav")
    assert upload.status_code in (200, 201), upload.text
    setup = {
        "port": live_api_port, "password": PASSWORD, "artifacts": str(ARTIFACTS),
        "python": sys.executable, "root": str(ROOT),
        "live": {"subdomain": mine, "account": str(my_account), "queue": my_queue,
                 "callback": callback["phone_number"]},
        "other": {"subdomain": theirs, "account": str(their_account), "queue": their_queue},
    }
    output = run_e2e("e2e/live.test.js", setup, E2E_TESTS, SUITE_TIMEOUT_SECONDS)
    # what the Queues screen saved is what the API has
    saved = admin.call("GET", "/api/queues")["items"]
    support = next(q for q in saved if q["name"] == "Support")
    assert (support["moh"], support["strategy"], support["service_level_seconds"]) == ("lobby", "ring_all", 30)
    agent = next(a for a in admin.call("GET", "/api/agents")["items"] if a["username"] == "agent1")
    assert agent["memberships"] == [{"queue_id": support["id"], "tier": 2}]
    # the supervisor cancelled the queue's callback on the Callbacks screen
    cancelled = admin.call("GET", f"/api/queues/{my_queue['id']}/callbacks/{callback['id']}")
    assert cancelled["status"] == "cancelled"
    print("\n".join(line for line in output.splitlines() if line.startswith("# ")))
