"""Engines per role and the session scopes that set the tenant for row-level security."""
from __future__ import annotations

import select
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, sessionmaker

from app.db.urls import sqlalchemy_url
from app.settings import get_settings

# The RLS policies read this transaction-local setting; unset means no rows.
TENANT_SETTING = "app.current_account"

_engines: dict[str, Engine] = {}
_sessions: dict[str, sessionmaker] = {}


def _alive_on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Pessimistic disconnect handling without a round trip per checkout: a PostgreSQL restart
    costs no call (the stale connection is replaced on checkout instead of failing the first
    query after it). A pooled connection the server has closed (restart, terminated backend,
    a relay cut) has its EOF or the FATAL notice waiting on the socket; only then is it pinged
    (``SELECT 1``), and a failed ping makes the pool replace it (DisconnectionError). SQLAlchemy's
    ``pool_pre_ping`` pinged every checkout: three round trips per call on the call path."""
    if dbapi_connection.closed:
        raise DisconnectionError("connection closed")
    readable, _, _ = select.select([dbapi_connection], [], [], 0)
    if not readable:
        return
    try:
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        dbapi_connection.rollback()
    except Exception as exc:  # any failure here means this connection is unusable
        raise DisconnectionError(f"stale pooled connection: {exc}") from exc


def _engine(url: str) -> Engine:
    engine = _engines.get(url)
    if engine is None:
        # hide_parameters: a failed statement's message (logged with the 500) must not carry
        # row values such as password hashes or encrypted secrets.
        engine = create_engine(sqlalchemy_url(url), pool_size=10, max_overflow=20,
                               future=True, hide_parameters=True)
        event.listen(engine, "checkout", _alive_on_checkout)
        _engines[url] = engine
    return engine


def _session_factory(url: str) -> sessionmaker:
    """One factory per role (building one per transaction shows up in call-setup profiles)."""
    factory = _sessions.get(url)
    if factory is None:
        factory = _sessions[url] = sessionmaker(bind=_engine(url), expire_on_commit=False)
    return factory


def app_engine() -> Engine:
    return _engine(get_settings().app_database_url)


def platform_engine() -> Engine:
    return _engine(get_settings().platform_database_url)


def reset_engines() -> None:
    """Drop pooled connections (tests that recreate the database, forked workers)."""
    for engine in _engines.values():
        engine.dispose()
    _engines.clear()
    _sessions.clear()


@contextmanager
def tenant_session(account_id: uuid.UUID | str) -> Iterator[Session]:
    """One transaction as the API role with RLS scoped to ``account_id``; commits on success."""
    session = _session_factory(get_settings().app_database_url)()
    try:
        with session.begin():
            session.execute(
                text("SELECT set_config(:name, :value, true)"),
                {"name": TENANT_SETTING, "value": str(account_id)},
            )
            yield session
    finally:
        session.close()


@contextmanager
def platform_read() -> Iterator[Connection]:
    """A connection for one cross-tenant read statement, outside any transaction (autocommit):
    no BEGIN and COMMIT round trips around it. For the call path's single-statement lookups."""
    with platform_engine().execution_options(isolation_level="AUTOCOMMIT").connect() as conn:
        yield conn


@contextmanager
def platform_session() -> Iterator[Session]:
    """One transaction on the cross-tenant path. Use only where no tenant is known yet."""
    session = _session_factory(get_settings().platform_database_url)()
    try:
        with session.begin():
            yield session
    finally:
        session.close()
