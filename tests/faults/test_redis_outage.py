"""Redis away: the limiter logs the outage once (and its duration when it ends), admits calls
unlimited, and replays the releases it could not make once Redis is back. Real Redis behind
a TCP relay the test cuts (new connections refused, open ones reset)."""
from __future__ import annotations

import logging
import time
import uuid

import pytest
import redis

from app.calls.limiter import ConcurrencyLimiter
from tests.events.tcp_proxy import TcpProxy
from tests.faults.processes import wait_for
from tests.session.conftest import call_record
from tests.simulator import Call


@pytest.fixture
def redis_relay(redis_client):
    kw = redis_client.connection_pool.connection_kwargs
    proxy = TcpProxy((kw.get("host", "127.0.0.1"), kw.get("port", 6379))).start()
    client = redis.Redis(host="127.0.0.1", port=proxy.port, db=kw.get("db", 0),
                         socket_timeout=2, socket_connect_timeout=2)
    yield proxy, client
    proxy.stop()


def _cut(proxy: TcpProxy) -> None:
    proxy.refuse()
    proxy.reset()


def _limiter_errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "app.calls.limiter" and r.levelno >= logging.ERROR]


def test_given_redis_down_when_calls_come_and_go_then_one_error_line_and_releases_replayed_when_back(
        redis_relay, redis_client, redis_prefix, caplog):
    caplog.set_level(logging.INFO, logger="app.calls.limiter")
    proxy, client = redis_relay
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:6]}:"
    limiter = ConcurrencyLimiter(client, key_prefix=prefix)
    truth = ConcurrencyLimiter(redis_client, key_prefix=prefix)  # Redis seen directly
    account = uuid.uuid4()
    before = [str(uuid.uuid4()) for _ in range(3)]
    for call_id in before:
        assert limiter.acquire(call_id, account, 10).admitted
    assert truth.counts(account)[0] == 3

    _cut(proxy)
    during = [str(uuid.uuid4()) for _ in range(20)]
    for call_id in during:
        assert limiter.acquire(call_id, account, 10).degraded
    limiter.release(*before)          # ended during the outage: their slots must not linger
    limiter.release(*during[:15])     # admitted and ended during the outage
    assert limiter.refresh(during[15:]) == []
    assert len(_limiter_errors(caplog)) == 1, "one ERROR line for the whole outage"
    assert truth.counts(account)[0] == 3, "nothing reached Redis while it was cut off"

    time.sleep(1.0)  # scenario: the outage lasts 1 s (last_duration asserted below)
    healed = time.monotonic()
    proxy.heal()
    wait_for(lambda: not limiter.outage.down, 15, "outage over")
    print(f"\nRedis back -> releases replayed in {time.monotonic() - healed:.2f}s")
    assert truth.counts(account)[0] == 5, "3 released by replay, the 5 live ones now counted"
    assert limiter.replayed == 3
    back = [r.getMessage() for r in caplog.records if "available again after" in r.getMessage()]
    assert len(back) == 1 and "3 held release(s) replayed, 5 call(s)" in back[0]
    assert limiter.outage.last_duration >= 1.0
    limiter.release(*during[15:])
    assert truth.counts(account)[0] == 0


def test_given_redis_down_when_calls_arrive_then_they_are_served_and_recorded_and_the_slots_settle_after(
        controller, services, simulate_call, number_with_app, owner_conn, redis_relay, caplog):
    caplog.set_level(logging.INFO, logger="app.calls.limiter")
    proxy, client = redis_relay
    services.limiter = ConcurrencyLimiter(client, key_prefix=services.limiter.prefix[:-len("limiter:")])
    account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hi"}], max_concurrent_calls=2)
    _cut(proxy)
    calls = [simulate_call(Call(callee=number), controller) for _ in range(6)]
    for call in calls:
        assert call.wait(15)
    for call in calls:
        assert call_record(owner_conn, call.uuid)["status"] == "completed"
    assert len(_limiter_errors(caplog)) == 1
    proxy.heal()
    wait_for(lambda: not services.limiter.outage.down, 15, "outage over")
    assert services.limiter.counts(account.id)[0] == 0
