"""Redis cut off from the controller for 10 s while the real switch carries calls: every call is
served (the limiter fails open), the outage is one ERROR line and one "available again" line in
the controller's log — not a line per call — and the releases of the calls that ended meanwhile
are replayed, so no slot is left held. Redis itself is never stopped."""
from __future__ import annotations

import time

import pytest
from sqlalchemy import make_url

from app.calls.limiter import ConcurrencyLimiter
from app.settings import get_settings
from tests.realswitch.provision import poll
from tests.realswitch.relay import relayed_controller

OUTAGE_SECONDS = 10.0
CALLS = 10


@pytest.fixture
def redis_relayed(product):
    url = get_settings().redis_url
    target = make_url(url)
    with relayed_controller(product, (target.host or "127.0.0.1", target.port or 6379),
                            {"SBC_REDIS_URL": url}) as relayed:
        yield relayed


def test_calls_are_served_through_a_redis_outage_logged_once_and_their_slots_released_after(
        redis_relayed, tenant, sipp):
    proxy, controller = redis_relayed
    number = tenant.number_for([{"verb": "say", "text": "Counting."}, {"verb": "pause", "length": 2},
                                {"verb": "hangup"}])
    assert sipp.call(number).ok
    limiter = ConcurrencyLimiter()  # the real Redis, the product's key prefix
    holder = sipp.start_calls(number, calls=1)  # admitted before the outage, ends during it
    poll(lambda: limiter.counts(tenant.account_id)[0] == 1, 10)

    log_before = len(controller.log_text())
    proxy.refuse()
    proxy.reset()
    cut = time.monotonic()
    served = sipp.call(number, calls=CALLS, rate=CALLS / (OUTAGE_SECONDS - 4), timeout=60)
    assert holder.wait(30).ok
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - cut)))  # scenario: the outage's length
    assert limiter.counts(tenant.account_id)[0] == 1, "the release could not reach Redis"
    healed = time.monotonic()
    proxy.heal()
    replayed = poll(lambda: limiter.counts(tenant.account_id)[0] == 0 and time.monotonic(), 30) - healed
    print(f"\nreal switch: Redis cut {healed - cut:.1f}s; {CALLS}/{CALLS} calls served meanwhile; "
          f"held release replayed {replayed:.2f}s after Redis answered")
    assert served.ok, served.errors
    log = controller.log_text()[log_before:]
    limiter_errors = [line for line in log.splitlines()
                      if " ERROR " in line and "concurrency limiter" in line]
    assert len(limiter_errors) == 1, limiter_errors
    assert "concurrency limiter (Redis) available again after" in log
    assert len(tenant.wait_record(number, count=CALLS + 2)) == CALLS + 2
