"""Failed-login throttle on POST /auth/login, through the real API against real Redis.

Each test gets its own key prefix (under the run's prefix, so the run's cleanup removes it) and
its own client address, so budgets spent here never leak into another test.
"""
from __future__ import annotations

import socket
import uuid
from typing import Any, Callable, Iterator

import pytest

from app.accounts.login_throttle import (
    ADDRESS_FAILURE_LIMIT,
    USER_FAILURE_LIMIT,
    WINDOW_SECONDS,
    LoginThrottle,
    throttle_client,
)
from app.api.auth.routes import THROTTLE_EXTENSION
from app.settings import get_settings

Login = Callable[..., Any]


@pytest.fixture
def throttle(api_app, redis_client) -> Iterator[LoginThrottle]:
    """The app's throttle for this test only, on a fresh key prefix."""
    prefix = f"{get_settings().redis_key_prefix}{uuid.uuid4().hex[:8]}:"
    throttle = LoginThrottle(redis_client, key_prefix=prefix)
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


def test_given_user_failures_at_the_limit_when_logging_in_again_then_429_with_error_shape_and_retry_after(login, seed):
    acme = seed.tenant()
    _fail(login, acme, "admin", USER_FAILURE_LIMIT)
    response = login(acme, "admin", "wrong-password")
    assert response.status_code == 429
    assert response.get_json() == {"code": "too_many_login_attempts",
                                   "message": "Too many failed login attempts. Try again later."}
    assert 0 < int(response.headers["Retry-After"]) <= WINDOW_SECONDS


def test_given_a_locked_user_when_the_correct_password_is_sent_then_still_429_and_no_bcrypt_runs(login, seed, bcrypt_checks):
    acme = seed.tenant()
    _fail(login, acme, "admin", USER_FAILURE_LIMIT)
    assert len(bcrypt_checks) == USER_FAILURE_LIMIT
    response = login(acme, "admin")  # the right password
    assert response.status_code == 429
    assert len(bcrypt_checks) == USER_FAILURE_LIMIT  # refused before any password check


def test_given_an_unknown_username_when_failing_then_it_is_locked_with_the_same_answer(login, seed):
    acme = seed.tenant()
    _fail(login, acme, "ghost", USER_FAILURE_LIMIT, address="198.51.100.1")
    _fail(login, acme, "admin", USER_FAILURE_LIMIT, address="198.51.100.2")
    ghost = login(acme, "ghost", "x", address="198.51.100.1")
    admin = login(acme, "admin", "x", address="198.51.100.2")
    assert ghost.status_code == admin.status_code == 429
    assert ghost.get_json() == admin.get_json()
    assert set(ghost.headers.keys()) == set(admin.headers.keys())


def test_given_failures_below_the_limit_when_the_user_logs_in_then_the_user_count_starts_again(login, seed):
    acme = seed.tenant()
    _fail(login, acme, "admin", USER_FAILURE_LIMIT - 1)
    assert login(acme, "admin").status_code == 200
    _fail(login, acme, "admin", USER_FAILURE_LIMIT - 1)  # would be 429 had the success not reset
    assert login(acme, "admin").status_code == 200


def test_given_a_locked_user_when_another_user_or_the_same_username_on_another_tenant_logs_in_then_unaffected(login, seed):
    acme, globex = seed.tenant(), seed.tenant()
    seed.user(acme, "bob", role="admin")
    _fail(login, acme, "admin", USER_FAILURE_LIMIT)
    assert login(acme, "admin").status_code == 429
    assert login(acme, "bob").status_code == 200
    assert login(globex, "admin").status_code == 200


def test_given_a_locked_user_when_logging_in_from_another_address_then_still_429(login, seed):
    """The user budget is per account, not per address: a botnet gets no more guesses."""
    acme = seed.tenant()
    _fail(login, acme, "admin", USER_FAILURE_LIMIT, address="198.51.100.3")
    assert login(acme, "admin", address="203.0.113.9").status_code == 429


def _users(seed, tenant, count: int) -> None:
    """Real users (cheap hashes): unknown ones would cost a full-cost dummy bcrypt each."""
    for i in range(count):
        seed.user(tenant, f"user{i}")


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
    _fail(login, acme, "admin", USER_FAILURE_LIMIT + 1)  # nothing is counted: no lockout
    assert login(acme, "admin").status_code == 200
    assert any("login throttle unavailable" in r.getMessage() for r in caplog.records)
