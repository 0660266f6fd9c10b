"""/api/account: a tenant admin reads its own account and may lower (never raise) its
concurrency limit; a disabled tenant is refused everywhere (login and every request)."""
from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, ProgrammingError

from app.accounts.admin import set_disabled, update_tenant
from tests.api_management.helpers import admin_client, assert_error
from tests.plugins.database import set_tenant


def _limit(owner_conn, tenant) -> int:
    return owner_conn.execute(text("SELECT max_concurrent_calls FROM accounts WHERE id = :a"),
                              {"a": tenant.account_id}).scalar_one()


def test_given_an_admin_when_reading_the_account_then_its_licenses_and_limit_are_shown(api, seed):
    tenant, admin = admin_client(api, seed, licenses=["api-access"])
    body = admin.get("/api/account").get_json()
    assert (body["subdomain"], body["licenses"], body["max_concurrent_calls"]) == (tenant.subdomain, ["api-access"], 0)


def test_given_a_limit_set_by_the_operator_when_the_admin_lowers_it_then_it_is_stored(api, seed, owner_conn):
    tenant, admin = admin_client(api, seed)
    update_tenant(tenant.subdomain, max_concurrent_calls=10)
    response = admin.patch("/api/account", json={"max_concurrent_calls": 4})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["max_concurrent_calls"] == 4
    assert _limit(owner_conn, tenant) == 4


def test_given_an_unlimited_account_when_the_admin_sets_a_limit_then_it_is_stored(api, seed, owner_conn):
    tenant, admin = admin_client(api, seed)
    assert admin.patch("/api/account", json={"max_concurrent_calls": 3}).status_code == 200
    assert _limit(owner_conn, tenant) == 3


def test_given_a_limit_when_the_admin_raises_it_or_sets_unlimited_then_403_and_unchanged(api, seed, owner_conn):
    tenant, admin = admin_client(api, seed)
    update_tenant(tenant.subdomain, max_concurrent_calls=5)
    assert_error(admin.patch("/api/account", json={"max_concurrent_calls": 6}), 403, "limit_raise_forbidden")
    assert_error(admin.patch("/api/account", json={"max_concurrent_calls": 0}), 403, "limit_raise_forbidden")
    assert _limit(owner_conn, tenant) == 5


def test_given_the_api_role_when_it_calls_the_database_function_to_raise_then_the_database_refuses(
        app_role_conn, seed):
    """The rule lives in the database: a bug in the API cannot raise a sold limit."""
    tenant = seed.tenant()
    update_tenant(tenant.subdomain, max_concurrent_calls=5)
    set_tenant(app_role_conn, tenant.account_id)
    with pytest.raises(DBAPIError) as info:
        app_role_conn.execute(text("SELECT lower_own_account_limit(50)"))
    assert info.value.orig.pgcode == "42501"


def test_given_the_api_role_then_it_still_cannot_update_accounts_directly(app_role_conn, seed):
    tenant = seed.tenant()
    set_tenant(app_role_conn, tenant.account_id)
    with pytest.raises(ProgrammingError):
        app_role_conn.execute(text("UPDATE accounts SET max_concurrent_calls = 99 WHERE id = :a"),
                              {"a": tenant.account_id})


def test_given_bad_limits_when_patched_then_422(api, seed):
    _, admin = admin_client(api, seed)
    for body in ({"max_concurrent_calls": -1}, {"max_concurrent_calls": "3"}, {}, {"licenses": []}):
        assert admin.patch("/api/account", json=body).status_code == 422, body


def test_given_an_agent_session_when_patching_the_account_then_403(api, seed):
    tenant = seed.tenant()
    seed.user(tenant, "agent1", role="agent")
    agent = api.login(tenant, "agent1")
    assert_error(agent.patch("/api/account", json={"max_concurrent_calls": 1}), 403, "admin_required")


def test_given_a_disabled_tenant_then_login_and_existing_tokens_are_refused_until_enabled(api, seed):
    tenant, admin = admin_client(api, seed)
    set_disabled(tenant.subdomain, True)
    assert_error(admin.get("/api/account"), 403, "account_disabled")
    body = {"username": tenant.admin.username, "password": tenant.admin.password}
    assert_error(api.anonymous(tenant.host).post("/auth/login", json=body), 403, "account_disabled")
    set_disabled(tenant.subdomain, False)
    assert admin.get("/api/account").status_code == 200
