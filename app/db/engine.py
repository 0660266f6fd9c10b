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

_engines: dict[tuple[str, str], Engine] = {}
_sessions: dict[tuple[str, str], sessionmaker] = {}


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


# Connections per pool: at most POOL_SIZE + POOL_OVERFLOW (30, as before), of which POOL_SIZE
# stay open when returned. Why 20 kept rather than 10: a connection beyond the kept ones is
# closed on return, and a controller at 40 calls/s opened 90 new ones in 20 s (each a backend
# fork, authentication and cold caches on the server, a connect on the controller).
POOL_SIZE = 20
POOL_OVERFLOW = 10
# `sbc controller --processes N` (share_pools): each child's pools get 1/N of the above, at
# least this much, so the N children together open what one process would (for N ≤ 10).
SHARED_POOL_MIN_SIZE = 2
SHARED_POOL_MIN_OVERFLOW = 1

_pool_limits: tuple[int, int] = (POOL_SIZE, POOL_OVERFLOW)


def shared_pool_limits(processes: int) -> tuple[int, int]:
    """(kept, extra) connections of each pool in one of ``processes`` processes that share the
    database's connections: POOL_SIZE // N kept (≥ 2) and POOL_OVERFLOW // N more under load
    (≥ 1). Why: every process has its own pools, and 8 controller processes with the whole
    20 + 10 each ran PostgreSQL's default 100 connections out (issue 27); a child drives about
    1/N of the calls, so it needs about 1/N of the connections."""
    processes = max(1, processes)
    return (max(SHARED_POOL_MIN_SIZE, POOL_SIZE // processes),
            max(SHARED_POOL_MIN_OVERFLOW, POOL_OVERFLOW // processes))


def share_pools(processes: int) -> None:
    """Size this process's pools as one of ``processes`` (shared_pool_limits). Call it before
    the first connection: pools already open keep their size."""
    global _pool_limits
    _pool_limits = shared_pool_limits(processes)


def pool_limits() -> tuple[int, int]:
    """(kept, extra) connections per pool of this process."""
    return _pool_limits

# Pool kinds of one role (see _engine)
DEFAULT_POOL, AUTOCOMMIT_POOL, RELAY_POOL = "default", "autocommit", "relay"
_POOL_OPTIONS: dict[str, dict[str, Any]] = {
    DEFAULT_POOL: {},
    AUTOCOMMIT_POOL: {"isolation_level": "AUTOCOMMIT"},
    RELAY_POOL: {"connect_args": {"options": "-c synchronous_commit=off"}},
}


def _engine(url: str, kind: str = DEFAULT_POOL) -> Engine:
    """The role's pool of one kind. Separate pools, because switching a pooled connection in
    and out of a mode costs a round trip per use (``SET default_transaction_isolation TO
    DEFAULT`` on its return, measured on the call path): AUTOCOMMIT_POOL for platform_read
    and run_as_tenant, RELAY_POOL for relay_session."""
    engine = _engines.get((url, kind))
    if engine is None:
        # hide_parameters: a failed statement's message (logged with the 500) must not carry
        # row values such as password hashes or encrypted secrets.
        size, overflow = _pool_limits
        engine = create_engine(sqlalchemy_url(url), pool_size=size, max_overflow=overflow,
                               future=True, hide_parameters=True, **_POOL_OPTIONS[kind])
        event.listen(engine, "checkout", _alive_on_checkout)
        _engines[(url, kind)] = engine
    return engine


def _session_factory(url: str, kind: str = DEFAULT_POOL) -> sessionmaker:
    """One factory per role and pool (building one per transaction shows up in call-setup
    profiles)."""
    factory = _sessions.get((url, kind))
    if factory is None:
        factory = _sessions[(url, kind)] = sessionmaker(bind=_engine(url, kind), expire_on_commit=False)
    return factory


def app_engine() -> Engine:
    return _engine(get_settings().app_database_url)


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


# The tenant setting as the first statement of a script (psycopg2 parameters)
_SET_TENANT_SQL = "SELECT set_config('" + TENANT_SETTING + "', %(tenant_account)s, true);\n"


def run_as_tenant(account_id: uuid.UUID | str, script: str, params: dict[str, Any]) -> Any:
    """Run ``script`` (statements separated by ``;``) as the API role with RLS scoped to
    ``account_id``, in one transaction and one round trip; returns the first row of its last
    statement (None when it has none).

    Why: BEGIN, the tenant setting and COMMIT are three round trips of their own in
    ``tenant_session``. Here the setting leads the script, which psycopg2 sends as one query
    on an autocommit connection (no BEGIN/COMMIT of its own); PostgreSQL runs the statements of
    one query as one implicit transaction: all or nothing, and ``set_config(..., true)`` holds
    until its end. For the call path's fixed scripts (app/calls/record_sql.py)."""
    with _engine(get_settings().app_database_url, AUTOCOMMIT_POOL).connect() as conn:
        result = conn.exec_driver_sql(_SET_TENANT_SQL + script,
                                      {**params, "tenant_account": str(account_id)})
        return result.first() if result.returns_rows else None


@contextmanager
def platform_read() -> Iterator[Connection]:
    """A connection for one cross-tenant read statement, outside any transaction (autocommit):
    no BEGIN and COMMIT round trips around it. For the call path's single-statement lookups."""
    with _engine(get_settings().platform_database_url, AUTOCOMMIT_POOL).connect() as conn:
        yield conn


@contextmanager
def platform_session(kind: str = DEFAULT_POOL) -> Iterator[Session]:
    """One transaction on the cross-tenant path. Use only where no tenant is known yet."""
    session = _session_factory(get_settings().platform_database_url, kind)()
    try:
        with session.begin():
            yield session
    finally:
        session.close()


@contextmanager
def relay_session() -> Iterator[Session]:
    """The outbox relay's transactions (claim, mark published, prune) on connections that
    commit without waiting for the disk (``synchronous_commit=off``). Why: a call emits ~6
    events and the relay marks each batch, one disk flush per batch; what a PostgreSQL crash
    can lose of such a commit (its last few hundred ms) only makes the relay publish those rows
    again, with the same ids, which consumers de-duplicate. The rows themselves are written by
    ordinary, durable transactions."""
    with platform_session(RELAY_POOL) as session:
        yield session
