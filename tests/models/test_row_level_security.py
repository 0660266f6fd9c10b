"""PostgreSQL enforces tenancy: proven with raw connections as the API role ``sbc_app``."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, ProgrammingError

from app.models import SHARED_TABLES, TENANT_TABLES
from tests.models.seed import remove_platform_routing, seed_platform_routing, seed_tenant
from tests.plugins.database import set_tenant

ALL_POLICY_TABLES = TENANT_TABLES + SHARED_TABLES


@pytest.fixture(scope="module")
def world(database):
    """Two seeded tenants plus platform-owned routing rows, created once for the module. The
    platform plan routes ``^1`` for every tenant, so it is removed afterwards: another module's
    LCR explain would otherwise find it."""
    from sqlalchemy import select

    from app.accounts.service import create_tenant
    from app.db.engine import platform_session
    from app.models import User
    from tests.plugins.database import unique_subdomain

    accounts = []
    for label in ("a", "b"):
        account = create_tenant(unique_subdomain(label), "admin", "password-123", ["queue-mgmt"], bcrypt_rounds=4)
        with platform_session() as s:
            account.admin_user_id = s.scalar(select(User.id).where(User.account_id == account.id))
        accounts.append(account)
    a, b = accounts
    platform = seed_platform_routing()
    yield {"a": a, "b": b, "a_ids": seed_tenant(a), "b_ids": seed_tenant(b), "platform": platform}
    remove_platform_routing(platform)


def _count(conn, table: str, account_id) -> int:
    return conn.execute(text(f"SELECT count(*) FROM {table} WHERE account_id = :a"), {"a": account_id}).scalar_one()


@pytest.mark.parametrize("table", ALL_POLICY_TABLES + ("accounts", "service_providers"))
def test_given_no_tenant_set_when_app_role_selects_then_every_tenant_table_is_empty(world, app_role_conn, table):
    with app_role_conn.begin():
        assert app_role_conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 0
    with app_role_conn.begin():
        set_tenant(app_role_conn, "")  # explicitly empty behaves like unset
        assert app_role_conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 0


@pytest.mark.parametrize("table", TENANT_TABLES)
def test_given_tenant_a_when_selecting_then_only_rows_of_a_are_visible(world, app_role_conn, table):
    a, b = world["a"], world["b"]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        rows = app_role_conn.execute(text(f"SELECT DISTINCT account_id FROM {table}")).scalars().all()
        assert rows == [a.id]
        assert _count(app_role_conn, table, b.id) == 0


@pytest.mark.parametrize("table", SHARED_TABLES)
def test_given_tenant_a_when_selecting_shared_tables_then_own_and_platform_rows_only(world, app_role_conn, table):
    a = world["a"]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        owners = set(app_role_conn.execute(text(f"SELECT DISTINCT account_id FROM {table}")).scalars())
        assert owners == {a.id, None}


def test_given_tenant_a_when_reading_accounts_then_only_its_own_row_and_provider(world, app_role_conn):
    a = world["a"]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        assert app_role_conn.execute(text("SELECT id FROM accounts")).scalars().all() == [a.id]
        assert app_role_conn.execute(text("SELECT id FROM service_providers")).scalars().all() == [
            a.service_provider_id
        ]


@pytest.mark.parametrize("table", ["users", "queues", "call_flows", "carriers", "lcr"])
def test_given_tenant_a_when_inserting_row_for_b_then_policy_refuses(world, app_role_conn, table):
    a, b = world["a"], world["b"]
    values = {
        "users": "(account_id, username, password_hash) VALUES (:acc, 'x', 'h')",
        "queues": "(account_id, name) VALUES (:acc, 'stolen')",
        "call_flows": "(account_id, name) VALUES (:acc, 'stolen')",
        "carriers": "(account_id, name) VALUES (:acc, 'stolen')",
        "lcr": "(account_id, name) VALUES (:acc, 'stolen')",
    }[table]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        with pytest.raises(ProgrammingError, match="row-level security"):
            app_role_conn.execute(text(f"INSERT INTO {table} {values}"), {"acc": b.id})


@pytest.mark.parametrize("table", ["carriers", "lcr"])
def test_given_tenant_when_inserting_platform_row_then_policy_refuses(world, app_role_conn, table):
    with app_role_conn.begin():
        set_tenant(app_role_conn, world["a"].id)
        with pytest.raises(ProgrammingError, match="row-level security"):
            app_role_conn.execute(text(f"INSERT INTO {table} (account_id, name) VALUES (NULL, 'x')"))


def test_given_tenant_a_when_moving_its_row_to_b_then_with_check_refuses(world, app_role_conn):
    a, b = world["a"], world["b"]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        with pytest.raises(ProgrammingError, match="row-level security"):
            app_role_conn.execute(
                text("UPDATE queues SET account_id = :b WHERE id = :q"), {"b": b.id, "q": world["a_ids"]["queues"]}
            )


@pytest.mark.parametrize("table", ["queues", "call_records", "users", "carriers"])
def test_given_tenant_a_when_updating_or_deleting_b_rows_then_nothing_changes(world, app_role_conn, owner_conn, table):
    a = world["a"]
    target = world["b_ids"][table]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        updated = app_role_conn.execute(text(f"UPDATE {table} SET account_id = account_id WHERE id = :id"), {"id": target})
        assert updated.rowcount == 0
        if table != "users":
            deleted = app_role_conn.execute(text(f"DELETE FROM {table} WHERE id = :id"), {"id": target})
            assert deleted.rowcount == 0
    assert owner_conn.execute(text(f"SELECT count(*) FROM {table} WHERE id = :id"), {"id": target}).scalar_one() == 1


@pytest.mark.parametrize("table", ["carriers", "gateways", "lcr", "lcr_routes", "lcr_carrier_set_entries"])
def test_given_platform_rows_when_tenant_updates_or_deletes_then_nothing_changes(world, app_role_conn, table):
    key = {"carriers": "carrier", "gateways": "gateway", "lcr": "lcr", "lcr_routes": "route",
           "lcr_carrier_set_entries": "entry"}[table]
    target = world["platform"][key]
    with app_role_conn.begin():
        set_tenant(app_role_conn, world["a"].id)
        assert app_role_conn.execute(text(f"SELECT count(*) FROM {table} WHERE id = :id"), {"id": target}).scalar_one() == 1
        assert app_role_conn.execute(text(f"UPDATE {table} SET created_at = now() WHERE id = :id"), {"id": target}).rowcount == 0
        assert app_role_conn.execute(text(f"DELETE FROM {table} WHERE id = :id"), {"id": target}).rowcount == 0


def test_given_tenant_when_referencing_other_tenants_parent_by_id_then_foreign_key_refuses(
    world, app_role_conn, owner_conn
):
    """Foreign-key checks ignore RLS; composite (id, account_id) keys close that hole."""
    a, b_ids = world["a"], world["b_ids"]
    b_user_without_agent = owner_conn.execute(
        text("INSERT INTO users (account_id, username, password_hash) VALUES (:b, :u, 'h') RETURNING id"),
        {"b": world["b"].id, "u": f"u-{uuid.uuid4().hex[:8]}"},
    ).scalar_one()
    owner_conn.commit()
    cases = [
        ("INSERT INTO gateways (account_id, carrier_id, ipv4) VALUES (:acc, :ref, '192.0.2.1')", b_ids["carriers"]),
        ("INSERT INTO callbacks (account_id, queue_id, phone_number) VALUES (:acc, :ref, '1555')", b_ids["queues"]),
        ("INSERT INTO applications (account_id, name, call_flow_sid) VALUES (:acc, 'x', :ref)", b_ids["call_flows"]),
        ("INSERT INTO phone_numbers (account_id, number, application_id) VALUES (:acc, '9990001', :ref)", b_ids["applications"]),
        ("INSERT INTO lcr_routes (account_id, lcr_id, regex) VALUES (:acc, :ref, '^1')", b_ids["lcr"]),
        ("INSERT INTO agents (account_id, user_id) VALUES (:acc, :ref)", b_user_without_agent),
    ]
    for sql, ref in cases:
        with app_role_conn.begin():
            set_tenant(app_role_conn, a.id)
            with pytest.raises(IntegrityError, match="foreign key"):
                app_role_conn.execute(text(sql), {"acc": a.id, "ref": ref})


def test_given_tenant_when_using_other_tenants_carrier_in_lcr_or_campaign_then_refused(world, app_role_conn):
    a, a_ids, b_ids = world["a"], world["a_ids"], world["b_ids"]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        with pytest.raises(IntegrityError, match="belongs to another account"):
            app_role_conn.execute(
                text("INSERT INTO lcr_carrier_set_entries (account_id, lcr_route_id, carrier_id) VALUES (:a, :r, :c)"),
                {"a": a.id, "r": a_ids["lcr_routes"], "c": b_ids["carriers"]},
            )
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        with pytest.raises(IntegrityError, match="belongs to another account"):
            app_role_conn.execute(
                text("UPDATE campaigns SET carrier_id = :c WHERE id = :id"), {"c": b_ids["carriers"], "id": a_ids["campaigns"]}
            )


def test_given_tenant_when_using_platform_carrier_in_own_lcr_then_allowed(world, app_role_conn):
    a, a_ids = world["a"], world["a_ids"]
    with app_role_conn.begin():
        set_tenant(app_role_conn, a.id)
        inserted = app_role_conn.execute(
            text("INSERT INTO lcr_carrier_set_entries (account_id, lcr_route_id, carrier_id, priority) VALUES (:a, :r, :c, 2)"),
            {"a": a.id, "r": a_ids["lcr_routes"], "c": world["platform"]["carrier"]},
        )
        assert inserted.rowcount == 1
        seen = app_role_conn.execute(
            text("SELECT account_id, carrier_id FROM lcr_carrier_set_entries WHERE lcr_route_id = :r AND priority = 2"),
            {"r": a_ids["lcr_routes"]},
        ).all()
        assert seen == [(a.id, world["platform"]["carrier"])]  # the tenant's own row, the platform's carrier
        app_role_conn.rollback()


def test_given_platform_role_when_selecting_then_all_tenants_are_visible(world, platform_role_conn):
    accounts = {world["a"].id, world["b"].id}
    for table in TENANT_TABLES:
        seen = set(platform_role_conn.execute(text(f"SELECT DISTINCT account_id FROM {table}")).scalars())
        assert accounts <= seen, table
    assert platform_role_conn.execute(text("SELECT count(*) FROM carriers WHERE account_id IS NULL")).scalar_one() >= 1


def test_given_no_tenant_when_app_role_resolves_subdomain_then_definer_function_returns_only_the_id(world, app_role_conn):
    a = world["a"]
    with app_role_conn.begin():
        found = app_role_conn.execute(text("SELECT account_id_for_subdomain(:s)"), {"s": a.subdomain.upper()}).scalar_one()
        missing = app_role_conn.execute(text("SELECT account_id_for_subdomain('no-such-tenant')")).scalar_one()
    assert found == a.id
    assert missing is None


def test_given_app_role_when_writing_platform_tables_then_privileges_refuse(world, app_role_conn):
    refused = [
        "INSERT INTO cluster_config (key, value) VALUES ('x', '1')",
        "UPDATE accounts SET max_concurrent_calls = 999",
        "INSERT INTO service_providers (name) VALUES ('rogue')",
        "SELECT count(*) FROM event_outbox",
        "DELETE FROM compliance_access_log",
        "UPDATE compliance_access_log SET action = 'x'",
        "DELETE FROM usage_meters",
        "SELECT count(*) FROM alembic_version",
    ]
    for sql in refused:
        with app_role_conn.begin():
            set_tenant(app_role_conn, world["a"].id)
            with pytest.raises(ProgrammingError, match="permission denied"):
                app_role_conn.execute(text(sql))


def test_given_app_role_when_inserting_outbox_event_without_returning_then_allowed(world, app_role_conn, owner_conn):
    event_id = uuid.uuid4()
    with app_role_conn.begin():
        inserted = app_role_conn.execute(
            text("INSERT INTO event_outbox (id, exchange, routing_key, body) VALUES (:id, 'call.events', 'call.started', '{}')"),
            {"id": event_id},
        )
        assert inserted.rowcount == 1
    # the app role may not read the outbox: the owner sees the committed row, then removes it
    try:
        row = owner_conn.execute(
            text("SELECT exchange, routing_key FROM event_outbox WHERE id = :id"), {"id": event_id}
        ).one_or_none()
        assert row == ("call.events", "call.started")
    finally:
        owner_conn.execute(text("DELETE FROM event_outbox WHERE id = :id"), {"id": event_id})
        owner_conn.commit()


def test_given_app_role_then_it_is_not_superuser_not_owner_and_cannot_bypass_rls(database, owner_conn):
    role = owner_conn.execute(
        text("SELECT rolsuper, rolbypassrls, rolcreatedb, rolcreaterole, rolcanlogin FROM pg_roles WHERE rolname = 'sbc_app'")
    ).one()
    assert tuple(role) == (False, False, False, False, True)
    owned = owner_conn.execute(
        text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tableowner IN ('sbc_app', 'sbc_platform')")
    ).scalar_one()
    assert owned == 0
    platform = owner_conn.execute(text("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'sbc_platform'")).one()
    assert tuple(platform) == (False, True)


def test_every_table_with_account_id_has_forced_row_level_security(database, owner_conn):
    """A new tenant table without a policy would silently leak: catch it here."""
    rows = owner_conn.execute(text("""
        SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
               (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r'
          AND (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account_id')
               OR c.relname = 'accounts')
    """)).all()
    assert {r.relname for r in rows} == set(ALL_POLICY_TABLES) | {"accounts"}
    for row in rows:
        assert row.relrowsecurity and row.relforcerowsecurity and row.policies >= 1, row.relname
