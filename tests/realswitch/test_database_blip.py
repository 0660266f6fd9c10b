"""PostgreSQL cut off from the controller for 10 s while the real switch carries calls: calls to a
number it routed before are admitted and served, a number it never saw is refused with 503, and
every served call is recorded once the database is back. Only the controller's database traffic
goes through a relay the test cuts; PostgreSQL itself is never stopped."""
from __future__ import annotations

import time

import pytest
from sqlalchemy import make_url, text

from app.settings import get_settings
from tests.realswitch.relay import relayed_controller as relayed_controller_for

OUTAGE_SECONDS = 10.0
CALLS = 10


@pytest.fixture
def relayed_controller(product):
    """The product's controller replaced by one whose database roles go through a relay."""
    settings = get_settings()
    target = make_url(settings.platform_database_url)
    with relayed_controller_for(product, (target.host or "127.0.0.1", target.port or 5432), {
            "SBC_APP_DATABASE_URL": settings.app_database_url,
            "SBC_PLATFORM_DATABASE_URL": settings.platform_database_url}) as (proxy, _):
        yield proxy


def test_calls_keep_being_admitted_through_a_database_blip_and_are_recorded_after_it(
        relayed_controller, tenant, sipp):
    verbs = [{"verb": "say", "text": "Still here."}, {"verb": "hangup"}]
    number, unseen = tenant.number_for(verbs), tenant.number_for(verbs)
    assert sipp.call(number).ok  # the controller routes it once: now it knows the number

    relayed_controller.refuse()
    relayed_controller.reset()
    cut = time.monotonic()
    callers = sipp.start_calls(number, calls=CALLS, rate=CALLS / (OUTAGE_SECONDS - 3))
    refused = sipp.call(unseen)
    served = callers.wait(60)
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - cut)))  # scenario: the outage's length
    healed = time.monotonic()
    relayed_controller.heal()

    assert refused.refusal == 503, refused.errors
    assert served.ok, served.errors
    records = tenant.wait_record(number, count=CALLS + 1, timeout=60)
    written = time.monotonic() - healed
    print(f"\nreal switch: PostgreSQL cut {healed - cut:.1f}s; {CALLS}/{CALLS} calls to a known number "
          f"admitted and served meanwhile; their records written {written:.2f}s after it was back")
    assert sorted(r["status"] for r in records) == ["completed"] * (CALLS + 1)
    assert tenant.records(unseen) == []  # no account was known: call.failed only, held meanwhile
    with tenant.owner_engine.connect() as conn:
        refusals = conn.execute(text(
            "SELECT count(*) FROM event_outbox WHERE routing_key = 'call.failed' "
            "AND body->'payload'->>'reason' = 'database_unavailable' "
            "AND body->'payload'->>'callId' NOT IN (SELECT call_id::text FROM call_records)")).scalar()
    assert refusals >= 1
