"""Per-run PostgreSQL database, migrated with the real Alembic chain, dropped at the end.

The database named in ``SBC_DATABASE_URL`` (``sbc_<run>``, set by tests/conftest.py) is created
from the ``postgres`` maintenance database, upgraded to head as the owner, and dropped (forcing
out any leftover connections) when the session ends. Nothing is mocked: tests talk to it as the
owner, as ``sbc_app`` (RLS applies) and as ``sbc_platform`` (cross-tenant).

Isolation between tests is by unique data (every ``make_account`` gets a fresh subdomain), not by
truncation: it is free, and it keeps RLS honest (other tenants' rows are always present).
"""
from __future__ import annotations

import uuid
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest
from sqlalchemy import create_engine, pool, text
from sqlalchemy.engine import Connection, Engine

from app.db.urls import sqlalchemy_url
from app.settings import get_settings

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "correct-horse-battery-staple"
# the cheapest bcrypt cost: hashes stay real bcrypt, tests stay fast
TEST_BCRYPT_ROUNDS = 4


def _database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def _maintenance_dsn(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/postgres", parts.query, parts.fragment))


def _maintenance(sql: str) -> None:
    conn = psycopg2.connect(_maintenance_dsn(get_settings().database_url))
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def set_tenant(conn: Connection, account_id: uuid.UUID | str | None) -> None:
    """Scope ``conn``'s current transaction to ``account_id`` exactly as tenant_session does
    (None clears it: the policies then return no rows)."""
    conn.execute(
        text("SELECT set_config('app.current_account', :value, true)"),
        {"value": "" if account_id is None else str(account_id)},
    )


@pytest.fixture(scope="session", autouse=True)
def database() -> Iterator[str]:
    """Create + migrate the run's database; yields its (owner) URL. Dropped at session end."""
    from app.db.engine import reset_engines
    from app.db.migrate import upgrade

    url = get_settings().database_url
    name = _database_name(url)
    _maintenance(f"DROP DATABASE IF EXISTS {_quote_ident(name)} WITH (FORCE)")
    _maintenance(f"CREATE DATABASE {_quote_ident(name)}")
    try:
        upgrade(url)
        yield url
    finally:
        reset_engines()
        _maintenance(f"DROP DATABASE IF EXISTS {_quote_ident(name)} WITH (FORCE)")


def _engine(url: str) -> Engine:
    return create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)


@pytest.fixture(scope="session")
def owner_engine(database: str) -> Iterator[Engine]:
    engine = _engine(database)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def app_role_engine(database: str) -> Iterator[Engine]:
    """Connects as ``sbc_app``: not superuser, not owner, no BYPASSRLS — RLS applies."""
    engine = _engine(get_settings().app_database_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def platform_role_engine(database: str) -> Iterator[Engine]:
    """Connects as ``sbc_platform`` (BYPASSRLS): the explicit cross-tenant path."""
    engine = _engine(get_settings().platform_database_url)
    yield engine
    engine.dispose()


def _open(engine: Engine) -> Iterator[Connection]:
    conn = engine.connect()
    try:
        yield conn
    finally:
        if conn.in_transaction():
            conn.rollback()
        conn.close()


@pytest.fixture
def owner_conn(owner_engine: Engine) -> Iterator[Connection]:
    """A connection as the owner (superuser in tests); rolled back unless the test commits."""
    yield from _open(owner_engine)


@pytest.fixture
def app_role_conn(app_role_engine: Engine) -> Iterator[Connection]:
    """A connection as ``sbc_app``; use ``set_tenant(conn, account_id)`` inside a transaction."""
    yield from _open(app_role_engine)


@pytest.fixture
def platform_role_conn(platform_role_engine: Engine) -> Iterator[Connection]:
    yield from _open(platform_role_engine)


def unique_subdomain(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def unique_number() -> str:
    """A phone number no other test uses (numbers are unique across the platform)."""
    return "1" + str(uuid.uuid4().int)[:14]


@pytest.fixture
def make_account(database: str) -> Callable[..., Any]:
    """Factory: ``make_account(subdomain=None, licenses=(...all...), max_concurrent_calls=0)``.

    Creates the account through ``create_tenant`` (the product path) with an admin user
    ``ADMIN_USERNAME`` / ``ADMIN_PASSWORD``. The returned ``Account`` also carries
    ``admin_username``, ``admin_password`` and ``admin_user_id`` (plain attributes).
    """
    from sqlalchemy import select

    from app.accounts.service import create_tenant
    from app.db.engine import platform_session
    from app.models import User
    from app.models.enums import LICENSES

    def factory(
        subdomain: str | None = None,
        licenses: tuple[str, ...] | list[str] = LICENSES,
        max_concurrent_calls: int = 0,
        admin_username: str = ADMIN_USERNAME,
        admin_password: str = ADMIN_PASSWORD,
    ) -> Any:
        account = create_tenant(
            subdomain or unique_subdomain(),
            admin_username,
            admin_password,
            list(licenses),
            max_concurrent_calls=max_concurrent_calls,
            bcrypt_rounds=TEST_BCRYPT_ROUNDS,
        )
        with platform_session() as session:
            admin_id = session.scalar(
                select(User.id).where(User.account_id == account.id, User.username == admin_username)
            )
        account.admin_username = admin_username
        account.admin_password = admin_password
        account.admin_user_id = admin_id
        return account

    return factory
