"""The concurrency limiter against the real Redis (run-prefixed keys)."""
from __future__ import annotations

import uuid

import gevent
import pytest

from app.calls.limiter import (
    REFUSAL_HANGUP_CAUSE,
    SCOPE_ACCOUNT,
    SCOPE_SERVICE_PROVIDER,
    ConcurrencyLimiter,
    start_refresher,
)


@pytest.fixture()
def limiter(redis_client):
    return ConcurrencyLimiter(redis_client)


def ids(n: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(n)]


def test_given_account_limit_2_when_third_call_arrives_then_refused_by_account_scope(limiter):
    account = uuid.uuid4()
    a, b, c = ids(3)
    assert limiter.acquire(a, account, 2).admitted
    second = limiter.acquire(b, account, 2)
    assert second.admitted and second.account_count == 2
    third = limiter.acquire(c, account, 2)
    assert not third.admitted
    assert third.refused_scope == SCOPE_ACCOUNT
    assert third.account_count == 2
    assert third.sip_status == 503 and third.hangup_cause == REFUSAL_HANGUP_CAUSE
    assert limiter.counts(account) == (2, 0)


def test_given_limit_0_when_many_calls_then_all_admitted_and_counted(limiter):
    account = uuid.uuid4()
    results = [limiter.acquire(c, account, 0) for c in ids(50)]
    assert all(r.admitted for r in results)
    assert results[-1].account_count == 50


def test_given_sp_limit_when_two_accounts_share_it_then_sp_scope_refuses_and_account_untouched(limiter):
    sp = uuid.uuid4()
    acct1, acct2 = uuid.uuid4(), uuid.uuid4()
    a, b, c = ids(3)
    assert limiter.acquire(a, acct1, 0, sp, 2).admitted
    assert limiter.acquire(b, acct2, 0, sp, 2).admitted
    refused = limiter.acquire(c, acct2, 10, sp, 2)
    assert not refused.admitted and refused.refused_scope == SCOPE_SERVICE_PROVIDER
    # both or neither: the refused call holds no account slot either
    assert limiter.counts(acct2, sp) == (1, 2)


def test_given_account_full_when_refused_then_sp_slot_not_taken(limiter):
    sp, account = uuid.uuid4(), uuid.uuid4()
    a, b = ids(2)
    assert limiter.acquire(a, account, 1, sp, 5).admitted
    assert limiter.acquire(b, account, 1, sp, 5).refused_scope == SCOPE_ACCOUNT
    assert limiter.counts(account, sp) == (1, 1)


def test_given_admitted_call_when_released_then_slot_is_free_and_release_is_idempotent(limiter):
    sp, account = uuid.uuid4(), uuid.uuid4()
    a, b = ids(2)
    assert limiter.acquire(a, account, 1, sp, 1).admitted
    assert not limiter.acquire(b, account, 1, sp, 1).admitted
    assert limiter.release(a) == 1
    assert limiter.release(a) == 0
    assert limiter.counts(account, sp) == (0, 0)
    assert limiter.acquire(b, account, 1, sp, 1).admitted


def test_given_same_call_acquired_twice_then_counted_once(limiter):
    account = uuid.uuid4()
    (a,) = ids(1)
    assert limiter.acquire(a, account, 1).admitted
    again = limiter.acquire(a, account, 1)
    assert again.admitted and again.account_count == 1


def test_given_100_greenlets_racing_for_10_slots_then_exactly_10_admitted(limiter):
    sp, account = uuid.uuid4(), uuid.uuid4()
    calls = ids(100)
    jobs = [gevent.spawn(limiter.acquire, c, account, 10, sp, 0) for c in calls]
    gevent.joinall(jobs, raise_error=True)
    admitted = [j.value for j in jobs if j.value.admitted]
    assert len(admitted) == 10
    assert limiter.counts(account, sp) == (10, 10)


def test_given_two_limiter_instances_racing_on_sp_limit_then_never_overshoot(redis_client):
    # two "controllers" (separate clients and limiter objects) share one service provider
    import redis as redis_lib

    from app.settings import get_settings

    other = redis_lib.Redis.from_url(get_settings().redis_url)
    l1, l2 = ConcurrencyLimiter(redis_client), ConcurrencyLimiter(other)
    sp = uuid.uuid4()
    accounts = [uuid.uuid4() for _ in range(5)]
    jobs = []
    for i, c in enumerate(ids(60)):
        lim = l1 if i % 2 else l2
        jobs.append(gevent.spawn(lim.acquire, c, accounts[i % 5], 0, sp, 7))
    gevent.joinall(jobs, raise_error=True)
    assert sum(j.value.admitted for j in jobs) == 7
    assert l1.counts(accounts[0], sp)[1] == 7
    other.close()


def test_given_controller_stops_refreshing_when_ttl_passes_then_slots_expire(redis_client):
    # the "killed" controller: acquires with a short TTL, then never refreshes or releases
    dead = ConcurrencyLimiter(redis_client, slot_ttl_seconds=0.4)
    alive = ConcurrencyLimiter(redis_client, slot_ttl_seconds=30)
    account = uuid.uuid4()
    a, b = ids(2)
    assert dead.acquire(a, account, 1).admitted
    assert not alive.acquire(b, account, 1).admitted
    gevent.sleep(0.6)  # scenario: the dead controller's 0.4 s TTL passes unrefreshed
    assert alive.acquire(b, account, 1).admitted
    assert alive.counts(account) == (1, 0)
    # the dead controller's call key expired too: nothing left behind but the live call
    assert redis_client.exists(dead.call_key(a)) == 0


def test_given_controller_refreshes_when_ttl_passes_then_slots_are_kept(redis_client):
    lim = ConcurrencyLimiter(redis_client, slot_ttl_seconds=0.5)
    account = uuid.uuid4()
    a, b = ids(2)
    assert lim.acquire(a, account, 1).admitted
    refresher = start_refresher(lim, lambda: [a], interval_seconds=0.1)
    try:
        gevent.sleep(1.0)  # scenario: twice the 0.5 s TTL passes while the refresher runs
        assert not lim.acquire(b, account, 1).admitted
    finally:
        refresher.kill()
    gevent.sleep(0.7)  # scenario: the 0.5 s TTL passes after the refresher stopped
    assert lim.acquire(b, account, 1).admitted


def test_given_slot_expired_when_refreshed_then_reported_lost_and_removed_everywhere(redis_client):
    lim = ConcurrencyLimiter(redis_client, slot_ttl_seconds=0.3)
    sp, account = uuid.uuid4(), uuid.uuid4()
    a, b = ids(2)
    assert lim.acquire(a, account, 0, sp, 0).admitted
    assert lim.acquire(b, account, 0, sp, 0).admitted
    gevent.sleep(0.5)  # scenario: the 0.3 s TTL passes before the refresh
    assert sorted(lim.refresh([a, b])) == sorted([a, b])
    assert lim.counts(account, sp) == (0, 0)


def test_given_negative_limit_then_value_error(limiter):
    with pytest.raises(ValueError):
        limiter.acquire("x", uuid.uuid4(), -1)


def test_keys_carry_the_run_prefix(limiter, redis_prefix):
    assert limiter.account_key("a").startswith(redis_prefix)
    assert limiter.call_key("c").startswith(redis_prefix)


def test_given_redis_unreachable_then_calls_are_admitted_degraded_and_release_does_not_raise():
    import socket

    import redis as redis_lib

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens here
    dead = redis_lib.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
    lim = ConcurrencyLimiter(dead)
    admission = lim.acquire("c1", uuid.uuid4(), 1, uuid.uuid4(), 1)
    assert admission.admitted and admission.degraded and admission.refused_scope is None
    assert lim.release("c1") == 0
    dead.close()
