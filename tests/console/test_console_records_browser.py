"""The console's call records (filters, CSV export, journey, the recording streamed by a media
ticket with HTTP Range), account page, campaign screens, the live view's supervise buttons and
the Callbacks screen (list, status filter, reschedule, cancel, the API's refusals),
end to end (issue 22): Debian's chromium through playwright-core (web/e2e/records.test.js)
against the real ``sbc api`` process on this run's database, Redis and RabbitMQ vhost, axe-core
on every screen, 1280×800 screenshots as the other console tests.

Without node, chromium or web/node_modules it skips, except under CI=true."""
from __future__ import annotations

import csv
import io
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile
from sqlalchemy import text
from sqlalchemy.engine import Engine

from app.accounts.service import create_tenant
from app.media.storage import recording_file_name
from tests.api_management.records_seed import BASE_TIME, insert_records
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
from tests.media.recorded_calls import seed_recorded_call
from tests.plugins.database import unique_number
from tests.plugins.skips import skip_or_fail_in_ci

SUITE_TIMEOUT_SECONDS = 240
E2E_TESTS = 5  # the tests of web/e2e/records.test.js: all of them must have run
RECORDING_SECONDS = 6.0
AGENT_RECORDS = 3
OTHER_RECORDS = 5
JOURNEY = "ivr > queue:Sales > agent:agent1"


@pytest.fixture
def records_api_port(amqp_vhost: str, api_port: int) -> int:  # noqa: F811
    return api_port


def _recording(account_id: uuid.UUID, recording_dir: Path) -> dict[str, Any]:  # noqa: F811
    """A 6 s stereo WAV (big enough that the player asks for it by ranges) on an answered call."""
    path = recording_dir / recording_file_name(account_id, uuid.uuid4(), "wav")
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(int(RECORDING_SECONDS * 8000)) / 8000) * 32767).astype(np.int16)
    soundfile.write(path, np.stack([tone, tone], axis=1), 8000, format="WAV")
    call = seed_recorded_call(account_id, path, recording_ms=int(RECORDING_SECONDS * 1000), direction="inbound",
                              started_at=BASE_TIME + timedelta(minutes=5), from_number="4930123456",
                              to_number="4930654321", talk_ms=6000, duration_ms=6500, journey=JOURNEY)
    return {"id": str(call.public_id), "seconds": RECORDING_SECONDS, "bytes": path.stat().st_size}


def _callbacks(admin: Rest, owner_engine: Engine, queue_id: str) -> dict[str, Any]:
    """Four callbacks of the queue: one being dialled (priority 9, so first), three pending."""
    made = {}
    for label, number, priority in [("dialing", "4930100001", 9), ("later", "4930100002", 1),
                                    ("cancel", "4930100003", 0), ("gone", "4930100004", -1)]:
        made[label] = admin.call("POST", f"/api/queues/{queue_id}/callbacks",
                                 {"phone_number": number, "priority": priority})
    with owner_engine.begin() as conn:
        conn.execute(text("UPDATE callbacks SET status = 'dialing', attempts = 1 WHERE id = :i"),
                     {"i": made["dialing"]["id"]})
    return {**{label: row["phone_number"] for label, row in made.items()}, "all": len(made),
            "goneId": made["gone"]["id"], "ids": {label: row["id"] for label, row in made.items()}}


@pytest.mark.timeout(SUITE_TIMEOUT_SECONDS + 60)
def test_call_records_account_campaigns_and_supervision_work_in_chromium_against_the_real_api(
        records_api_port: int, owner_engine: Engine, recording_dir: Path) -> None:  # noqa: F811
    missing = _missing()
    if missing:
        skip_or_fail_in_ci(f"console browser tests: {missing}")
    port = records_api_port
    subdomain = f"rec-{uuid.uuid4().hex[:10]}"
    account = create_tenant(subdomain, "admin", PASSWORD, ["api-access", "queue-mgmt", "programmable-voice"],
                            bcrypt_rounds=4)
    admin = Rest(port, subdomain)
    queue = admin.call("POST", "/api/queues", {"name": "Sales"})
    admin.call("POST", "/api/users", {"username": "agent1", "password": PASSWORD, "role": "agent"})
    admin.call("POST", "/api/users", {"username": "sup1", "password": PASSWORD, "role": "supervisor",
                                      "permissions": ["recordings.view"]})
    agent_user = next(u for u in admin.call("GET", "/api/users")["items"] if u["username"] == "agent1")
    agent = admin.call("POST", "/api/agents", {"user_id": agent_user["id"], "contact": "user/1001",
                                               "queue_ids": [queue["id"]]})
    insert_records(owner_engine, account.id, AGENT_RECORDS, agent_id=agent["id"], queue_id=queue["id"])
    insert_records(owner_engine, account.id, OTHER_RECORDS, start=BASE_TIME - timedelta(days=1))
    carrier = admin.call("POST", "/api/carriers", {"name": "Trunk A"})
    number = admin.call("POST", "/api/phone-numbers", {"number": unique_number()})
    setup = {
        "port": port, "password": PASSWORD, "artifacts": str(ARTIFACTS), "python": sys.executable, "root": str(ROOT),
        "subdomain": subdomain, "account": str(account.id),
        "agent": {"id": agent["id"], "username": "agent1", "records": AGENT_RECORDS},
        "queue": queue, "carrier": carrier, "number": number, "supervisor": "sup1",
        "records": AGENT_RECORDS + OTHER_RECORDS + 1, "recording": _recording(account.id, recording_dir),
        "journey": JOURNEY, "callbacks": _callbacks(admin, owner_engine, queue["id"]),
    }
    output = run_e2e("e2e/records.test.js", setup, E2E_TESTS, SUITE_TIMEOUT_SECONDS)
    # what the campaign screens saved is what the API has
    campaign = next(c for c in admin.call("GET", "/api/campaigns")["items"] if c["name"] == "Renewals")
    assert (campaign["dialer_mode"], campaign["agent_group_ids"], campaign["carrier_id"], campaign["caller_id"]) == (
        "preview", [queue["id"]], carrier["id"], number["number"])
    assert (campaign["window_start"], campaign["window_end"], campaign["allowed_weekdays"]) == ("09:00", "17:30", [1, 2, 3, 4, 5])
    assert campaign["retry_policy"]["busy"] == {"delay_seconds": 120, "max_attempts": 4}
    assert campaign["status"] == "completed"
    contacts = admin.call("GET", f"/api/campaigns/{campaign['id']}/contacts")["items"]
    assert sorted(c["phone_number"] for c in contacts) == ["12125550101", "12125550102", "33123456789"]
    # what the Callbacks screen did is what the API has; the one being dialled is untouched
    callbacks = {c["id"]: c for c in admin.call("GET", f"/api/queues/{queue['id']}/callbacks")}
    ids = setup["callbacks"]["ids"]
    later = callbacks[ids["later"]]
    assert later["status"] == "pending" and later["priority"] == 7 and later["scheduled_at"].startswith("2030-01-0")
    assert [callbacks[ids[k]]["status"] for k in ("cancel", "gone", "dialing")] == ["cancelled", "cancelled", "dialing"]
    # the CSV the browser downloaded is the API's export with the page's filters
    exported = (ARTIFACTS / "call-records-agent1.csv").read_text()
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0][:4] == ["Time", "Direction", "Caller", "Callee"] and len(rows) == 1 + AGENT_RECORDS
    assert {row[4] for row in rows[1:]} == {"agent1"}
    print("\n".join(line for line in output.splitlines() if line.startswith("# ")))
