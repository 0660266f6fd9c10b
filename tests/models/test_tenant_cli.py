"""``sbc tenant create`` and ``create_tenant``: the product path for provisioning a tenant."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select, text

from app.accounts.passwords import verify_password
from app.accounts.service import create_tenant
from app.cli import main
from app.db.engine import platform_session
from app.errors import Conflict, ValidationFailed
from app.models import Account, ServiceProvider, User
from app.models.enums import PERMISSIONS
from tests.plugins.database import unique_subdomain

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tenants"
BAD = json.loads((FIXTURES / "create_bad.json").read_text())
GOOD = json.loads((FIXTURES / "create_good.json").read_text())


def _cli(*args: str):
    return CliRunner().invoke(main, ["tenant", "create", *args])


def _account(subdomain: str):
    with platform_session() as s:
        account = s.scalars(select(Account).where(Account.subdomain == subdomain)).one_or_none()
        users = s.scalars(select(User).where(User.account_id == account.id)).all() if account else []
        return account, users


def test_given_valid_options_when_cli_creates_tenant_then_account_and_bcrypt_admin_exist(database):
    sub = unique_subdomain("cli")
    result = _cli("--subdomain", sub, "--admin-user", "boss", "--admin-password", "s3cret-pass",
                  "--licenses", "api-access,queue-mgmt")
    assert result.exit_code == 0, result.output
    assert f"created tenant {sub}" in result.output
    assert "s3cret-pass" not in result.output
    account, users = _account(sub)
    assert account.licenses == ["api-access", "queue-mgmt"]
    assert account.max_concurrent_calls == 0
    (admin,) = users
    assert (admin.username, admin.role, admin.permissions) == ("boss", "admin", list(PERMISSIONS))
    assert admin.password_hash.startswith("$2b$") and verify_password("s3cret-pass", admin.password_hash)
    assert not verify_password("wrong-pass", admin.password_hash)


def test_given_taken_subdomain_when_cli_creates_tenant_then_exit_1_with_message(database):
    sub = unique_subdomain("dup")
    assert _cli("--subdomain", sub, "--admin-user", "a", "--admin-password", "password-1").exit_code == 0
    result = _cli("--subdomain", sub.upper(), "--admin-user", "b", "--admin-password", "password-2")
    assert result.exit_code == 1
    assert f"subdomain '{sub}' is already taken" in result.output
    _, users = _account(sub)
    assert [u.username for u in users] == ["a"]


@pytest.mark.parametrize("case", BAD, ids=[c["case"] for c in BAD])
def test_given_bad_input_when_cli_creates_tenant_then_exit_1_and_nothing_is_written(database, case):
    args = case["args"]
    result = _cli("--subdomain", args["subdomain"], "--admin-user", args["admin_user"],
                  "--admin-password", args["admin_password"], "--licenses", args["licenses"])
    assert result.exit_code == 1
    assert case["message"] in result.output
    with platform_session() as s:
        assert s.scalar(select(Account.id).where(Account.subdomain == args["subdomain"].lower())) is None


@pytest.mark.parametrize("case", BAD, ids=[c["case"] for c in BAD])
def test_given_bad_input_when_create_tenant_then_validation_failed_with_stable_code(database, case):
    args = case["args"]
    with pytest.raises(ValidationFailed) as info:
        create_tenant(args["subdomain"], args["admin_user"], args["admin_password"], args["licenses"], bcrypt_rounds=4)
    assert info.value.code == case["code"]
    assert info.value.status == 422


@pytest.mark.parametrize("case", GOOD, ids=[c["case"] for c in GOOD])
def test_given_license_list_when_create_tenant_then_stored_deduplicated_in_catalogue_order(database, case):
    account = create_tenant(unique_subdomain(), "admin", "password-123", case["licenses"], bcrypt_rounds=4)
    assert account.licenses == case["expected"]


def test_given_taken_subdomain_when_create_tenant_then_conflict(database):
    sub = unique_subdomain()
    create_tenant(sub, "admin", "password-123", bcrypt_rounds=4)
    with pytest.raises(Conflict) as info:
        create_tenant(sub, "admin", "password-123", bcrypt_rounds=4)
    assert (info.value.code, info.value.status) == ("subdomain_taken", 409)


def test_given_mixed_case_subdomain_when_create_tenant_then_stored_lowercase(database):
    sub = unique_subdomain("MiXeD")
    account = create_tenant(sub, "admin", "password-123", bcrypt_rounds=4)
    assert account.subdomain == sub.lower()


def test_given_several_tenants_then_they_share_one_default_service_provider(database):
    first = create_tenant(unique_subdomain(), "admin", "password-123", bcrypt_rounds=4)
    second = create_tenant(unique_subdomain(), "admin", "password-123", bcrypt_rounds=4)
    assert first.service_provider_id == second.service_provider_id
    with platform_session() as s:
        assert s.scalar(select(ServiceProvider.name).where(ServiceProvider.id == first.service_provider_id))


def test_given_make_account_fixture_then_admin_can_be_found_with_known_password(make_account, owner_conn):
    account = make_account(licenses=["queue-mgmt"], max_concurrent_calls=3)
    row = owner_conn.execute(
        text("SELECT username, password_hash FROM users WHERE id = :id"), {"id": account.admin_user_id}
    ).one()
    assert row.username == account.admin_username
    assert verify_password(account.admin_password, row.password_hash)
    assert (account.licenses, account.max_concurrent_calls) == (["queue-mgmt"], 3)
