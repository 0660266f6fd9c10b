"""Alembic environment: online migrations only, as the owner role, one at a time.

A PostgreSQL advisory lock serialises concurrent ``sbc db upgrade`` runs (api and controller
starting together): the second waits, then finds nothing to do.
"""
from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool, text

from app.db.urls import sqlalchemy_url
from app.models import Base

# arbitrary constant: "sbc-migrate"
MIGRATION_LOCK_ID = 0x5BC0_0001


def _url() -> str:
    url = context.config.attributes.get("url")
    if url:
        return url
    from app.settings import get_settings

    return get_settings().database_url


def run_migrations_online() -> None:
    engine = create_engine(sqlalchemy_url(_url()), poolclass=pool.NullPool)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": MIGRATION_LOCK_ID})
        try:
            connection.commit()
            context.configure(
                connection=connection,
                target_metadata=Base.metadata,
                compare_type=True,
                transaction_per_migration=False,
            )
            with context.begin_transaction():
                context.run_migrations()
            connection.commit()
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": MIGRATION_LOCK_ID})
            connection.commit()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (SQL script) migrations are not supported: run `sbc db upgrade`")
run_migrations_online()
