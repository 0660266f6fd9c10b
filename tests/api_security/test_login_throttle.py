"""Failed-login throttle on POST /auth/login, through the real API against real Redis
(docs/api.md "Login rate limiting").

Each test gets its own key prefix (under the run's prefix, so the run's cleanup removes it), its
own client address, and a frozen clock the throttle reads instead of Redis ``TIME``: waiting out
a delay is moving the clock, never sleeping.
"""
from __future__ import annotations

import socket
import time
import uuid
from typing import Any, Callable, Iterator

import pytest

from app.accounts.login_throttle import (
    ADDRESS_FAILURE_LIMIT,
    PAIR_BASE_DELAY_SECONDS,
    PAIR_FREE_FAILURES,
    PAIR_MAX_DELAY_SECONDS,
    USER_FAILURE_LIMIT,
    WINDOW_SECONDS,
    LoginThrottle,
    throttle_client,
)
from app.api.auth.routes import THROTTLE_EXTENSION
from app.settings import get_settings

Login = Callable[..., Any]


class FrozenClock:
    """Seconds since the epoch, moved only by the test."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def throttle(api_app, redis_client, clock) -> Iterator[LoginThrottle]:
    """The app's throttle for this test only, on a fresh key prefix and the frozen clock."""
    prefix = f"{get_settings().redis_key_prefix}{uuid.uuid4().hex[:8]}:"
    throttle = LoginThrottle(redis_client, key_prefix=prefix, clock=clock)
    previous = api_app.extensions.get(THROTTLE_EXTENSION)
    api_app.extensions[THROTTLE_EXTENSION] = throttle
    yield throttle
    if previous is None:
        api_app.extensions.pop(THROTTLE_EXTENSION, None)
    else:
        api_app.extensions[THROTTLE_EXTENSION] = previous


@pytest.fixture
def login(api, throttle) -> Login:
    """POST /auth/login as ``tenant`` from ``address`` (a fresh documentation address per test)."""
    default_address = f"198.51.100.{uuid.uuid4().int % 250 + 1}"

    def post(tenant, username: str = "admin", password: str | None = None, *,
             address: str | None = None):
        if password is None:
            password = tenant.users[username].password
        return api.anonymous(tenant.host).post(
            "/auth/login", json={"username": username, "password": password},
            environ_base={"REMOTE_ADDR": address or default_address})

    return post


def _fail(login: Login, tenant, username: str, times: int, **kw: Any) -> None:
    for _ in range(times):
        response = login(tenant, username, "wrong-password", **kw)
        assert response.status_code == 401, response.get_json()


def _fail_patiently(login: Login, clock: FrozenClock, tenant, username: str, times: int, **kw: Any) -> list[int]:
    """``times`` wrong passwords, each after waiting out the ``Retry-After`` it was told;
    the waits, in order."""
    waits: list[int] = []
    failed = 0
    for _ in range(2 * times + 10):  # bounded: a throttle that never lets one through fails here
        if failed == times:
            break
        response = login(tenant, username, "wrong-password", **kw)
        if response.status_code == 429:
            waits.append(int(response.headers["Retry-After"]))
            clock.now += waits[-1]
            continue
        assert response.status_code == 401, response.get_json()
        failed += 1
    assert failed == times, f"only {failed} of {times} attempts got through; waits {waits}"
    return waits


def _expected_delays(count: int) -> list[int]:
    return [min(PAIR_BASE_DELAY_SECONDS * 2 ** n, PAIR_MAX_DELAY_SECONDS) for n in range(count)]


def test_given_free_failures_spent_from_one_address_then_each_next_attempt_waits_twice_as_long_up_to_the_ceiling(
        login, seed, clock):
    acme = seed.tenant()
    _fail(login, acme, "admin", PAIR_FREE_FAILURES)  # typos pass at once
    response = login(acme, "admin", "wrong-password")
    assert response.status_code == 429
    assert response.get_json() == {"code": "too_many_login_attempts",
                                   "message": "Too many failed login attempts. Try again later."}
    assert int(response.headers["Retry-After"]) == PAIR_BASE_DELAY_SECONDS
    waits = _fail_patiently(login, clock, acme, "admin", 12)
    assert waits == _expected_delays(12)  # 2, 4, 8 ... 512, then 900, 900
    assert waits[-1] == PAIR_MAX_DELAY_SECONDS


def test_given_an_attacker_failing_20_times_from_one_address_then_the_user_signs_in_at_once_from_another(
        login, seed, clock):
    acme = seed.tenant()
    waits = _fail_patiently(login, clock, acme, "admin", 20, address="203.0.113.66")
    assert waits == _expected_delays(20 - PAIR_FREE_FAILURES)  # the attacker is slowed down...
    assert login(acme, "admin", address="203.0.113.66").status_code == 429  # ...even with the right password
    assert login(acme, "admin", address="198.51.100.200").status_code == 200  # the victim is not


def test_given_a_delayed_pair_when_the_correct_password_is_sent_then_still_429_and_no_bcrypt_runs(login, seed, bcrypt_checks):
    acme = seed.tenant()
    _fail(login, acme, "admin", PAIR_FREE_FAILURES)
    assert len(bcrypt_checks) == PAIR_FREE_FAILURES
    response = login(acme, "admin")  # the right password
    assert response.status_code == 429
    assert len(bcrypt_checks) == PAIR_FREE_FAILURES  # refused before any password check


def test_given_an_unknown_username_when_failing_then_it_is_delayed_with_the_same_answer(login, seed):
    acme = seed.tenant()
    _fail(login, acme, "ghost", PAIR_FREE_FAILURES, address="198.51.100.1")
    _fail(login, acme, "admin", PAIR_FREE_FAILURES, address="198.51.100.2")
    ghost = login(acme, "ghost", "x", address="198.51.100.1")
    admin = login(acme, "admin", "x", address="198.51.100.2")
    assert ghost.status_code == admin.status_code == 429
    assert ghost.get_json() == admin.get_json()
    assert ghost.headers["Retry-After"] == admin.headers["Retry-After"]
    assert set(ghost.headers.keys()) == set(admin.headers.keys())


def test_given_failures_when_the_user_logs_in_then_the_pair_count_starts_again(login, seed, clock):
    acme = seed.tenant()
    _fail(login, acme, "admin", PAIR_FREE_FAILURES)
    clock.now += PAIR_BASE_DELAY_SECONDS
    assert login(acme, "admin").status_code == 200
    _fail(login, acme, "admin", PAIR_FREE_FAILURES)  # would be 429 had the success not reset
    clock.now += PAIR_BASE_DELAY_SECONDS
    assert login(acme, "admin").status_code == 200


def test_given_a_delayed_pair_when_another_user_or_the_same_username_on_another_tenant_logs_in_then_unaffected(login, seed):
    acme, globex = seed.tenant(), seed.tenant()
    seed.user(acme, "bob", role="admin")
    _fail(login, acme, "admin", PAIR_FREE_FAILURES)
    assert login(acme, "admin").status_code == 429
    assert login(acme, "bob").status_code == 200
    assert login(globex, "admin").status_code == 200


def _users(seed, tenant, count: int) -> None:
    """Real users (cheap hashes): unknown ones would cost a full-cost dummy bcrypt each."""
    for i in range(count):
        seed.user(tenant, f"user{i}")


def test_given_failures_spread_over_many_addresses_then_new_addresses_wait_but_the_users_known_address_does_not(
        login, seed):
    """The per-user bound across addresses: a distributed guesser spends it, the user keeps
    signing in from an address they signed in from before."""
    acme = seed.tenant()
    assert login(acme, "admin", address="192.0.2.10").status_code == 200  # the user's own address
    attackers = [f"203.0.113.{100 + i}" for i in range(USER_FAILURE_LIMIT // PAIR_FREE_FAILURES)]
    for address in attackers:  # each address within its free failures: no pair delay anywhere
        _fail(login, acme, "admin", PAIR_FREE_FAILURES, address=address)
    assert len(attackers) * PAIR_FREE_FAILURES == USER_FAILURE_LIMIT
    fresh = login(acme, "admin", address="203.0.113.250")
    assert fresh.status_code == 429  # a new address waits, even with the right password
    assert 0 < int(fresh.headers["Retry-After"]) <= WINDOW_SECONDS
    assert login(acme, "admin", address="192.0.2.10").status_code == 200  # the known one does not


def test_given_an_address_spraying_many_usernames_when_over_the_address_limit_then_429_even_for_a_fresh_user(login, seed):
    acme = seed.tenant()
    _users(seed, acme, ADDRESS_FAILURE_LIMIT)
    for i in range(ADDRESS_FAILURE_LIMIT):
        _fail(login, acme, f"user{i}", 1, address="203.0.113.50")
    assert login(acme, "admin", address="203.0.113.50").status_code == 429
    assert login(acme, "admin", address="203.0.113.51").status_code == 200


def test_given_ipv6_clients_when_failing_then_one_slash_64_shares_one_address_budget(login, seed):
    acme = seed.tenant()
    _users(seed, acme, ADDRESS_FAILURE_LIMIT)
    for i in range(ADDRESS_FAILURE_LIMIT):
        _fail(login, acme, f"user{i}", 1, address=f"2001:db8:1:2::{i + 1:x}")
    assert login(acme, "admin", address="2001:db8:1:2::ffff").status_code == 429
    assert login(acme, "admin", address="2001:db8:1:3::1").status_code == 200


def test_given_a_success_when_counting_the_address_then_only_failures_spend_its_budget(login, seed):
    acme = seed.tenant()
    for _ in range(ADDRESS_FAILURE_LIMIT + 1):
        assert login(acme, "admin", address="203.0.113.60").status_code == 200


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_given_redis_unreachable_when_logging_in_then_login_still_works_and_fails_open(api_app, login, seed, caplog):
    dead = throttle_client(f"redis://127.0.0.1:{_closed_port()}/0")  # the production client policy
    api_app.extensions[THROTTLE_EXTENSION] = LoginThrottle(dead, key_prefix="unused:")
    acme = seed.tenant()
    _fail(login, acme, "admin", PAIR_FREE_FAILURES + 2)  # nothing is counted: no delay
    assert login(acme, "admin").status_code == 200
    assert any("login throttle unavailable" in r.getMessage() for r in caplog.records)
