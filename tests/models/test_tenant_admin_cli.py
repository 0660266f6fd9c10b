"""``sbc tenant list | show | update | disable | enable``: tenant administration after create,
without SQL (issue 13, issue 9 item 13)."""
from __future__ import annotations

import json

from click.testing import CliRunner
from sqlalchemy import select

from app.cli import main
from app.db.engine import platform_session
from app.models import Account
from tests.plugins.database import unique_subdomain


def _sbc(*args: str):
    return CliRunner().invoke(main, list(args))


def _create(**options: str) -> str:
    sub = unique_subdomain("adm")
    args = ["tenant", "create", "--subdomain", sub, "--admin-user", "boss", "--admin-password", "s3cret-pass"]
    for name, value in options.items():
        args += [f"--{name.replace('_', '-')}", value]
    assert _sbc(*args).exit_code == 0
    return sub


def _account(sub: str) -> Account:
    with platform_session() as s:
        return s.scalars(select(Account).where(Account.subdomain == sub)).one()


def test_given_a_tenant_when_its_limit_is_updated_then_the_new_limit_is_stored(database):
    sub = _create(max_concurrent_calls="2")
    result = _sbc("tenant", "update", sub, "--max-concurrent-calls", "25")
    assert result.exit_code == 0, result.output
    assert "max_concurrent_calls=25" in result.output
    assert _account(sub).max_concurrent_calls == 25
    assert _sbc("tenant", "update", sub, "--max-concurrent-calls", "0").exit_code == 0
    assert _account(sub).max_concurrent_calls == 0


def test_given_a_tenant_without_licenses_when_licenses_are_updated_then_they_replace_the_set(database):
    sub = _create()
    assert _sbc("tenant", "update", sub, "--licenses", "queue-mgmt,api-access").exit_code == 0
    assert _account(sub).licenses == ["api-access", "queue-mgmt"]
    assert _sbc("tenant", "update", sub, "--licenses", "").exit_code == 0
    assert _account(sub).licenses == []


def test_given_bad_updates_then_exit_non_zero_and_nothing_changes(database):
    sub = _create(max_concurrent_calls="3")
    assert _sbc("tenant", "update", sub, "--max-concurrent-calls", "-1").exit_code == 2
    unknown = _sbc("tenant", "update", sub, "--licenses", "telepathy")
    assert unknown.exit_code == 1 and "unknown license(s): telepathy" in unknown.output
    assert _sbc("tenant", "update", sub).exit_code == 2  # nothing to change
    missing = _sbc("tenant", "update", unique_subdomain("nobody"), "--max-concurrent-calls", "1")
    assert missing.exit_code == 1 and "no tenant" in missing.output
    assert (_account(sub).max_concurrent_calls, _account(sub).licenses) == (3, [])


def test_given_tenants_when_listed_then_each_shows_state_limit_and_licenses(database):
    sub = _create(max_concurrent_calls="7", licenses="api-access")
    table = _sbc("tenant", "list")
    line = next(line for line in table.output.splitlines() if line.startswith(sub + " "))
    assert line.split()[1:3] == ["active", "7"] and line.endswith("api-access")
    rows = json.loads(_sbc("tenant", "list", "--json").output)
    row = next(r for r in rows if r["subdomain"] == sub)
    assert (row["maxConcurrentCalls"], row["licenses"], row["users"], row["state"]) == (7, ["api-access"], 1, "active")


def test_given_a_tenant_when_shown_then_every_field_is_printed(database):
    sub = _create()
    shown = json.loads(_sbc("tenant", "show", sub, "--json").output)
    assert shown["subdomain"] == sub and shown["maxConcurrentCalls"] == 0 and shown["disabledAt"] is None
    text_out = _sbc("tenant", "show", sub).output
    assert "maxConcurrentCalls   unlimited" in text_out
    assert _sbc("tenant", "show", "bad_label!").exit_code == 1


def test_given_a_tenant_when_disabled_then_it_is_marked_and_enable_undoes_it(database):
    sub = _create()
    result = _sbc("tenant", "disable", sub)
    assert result.exit_code == 0 and f"disabled tenant {sub}" in result.output
    first = _account(sub).disabled_at
    assert first is not None
    assert _sbc("tenant", "disable", sub).exit_code == 0
    assert _account(sub).disabled_at == first  # idempotent: keeps the first time
    assert json.loads(_sbc("tenant", "show", sub, "--json").output)["state"] == "disabled"
    assert _sbc("tenant", "enable", sub).exit_code == 0
    assert _account(sub).disabled_at is None
