"""Apply the Alembic chain programmatically (``sbc db upgrade``, test setup, containers at boot)."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

REPO_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str | None = None) -> Config:
    """Config pointing at the repo's migrations; ``url`` defaults to settings.database_url.
    The URL travels in ``attributes`` (not the ini) so '%' in passwords needs no escaping."""
    cfg = Config(str(REPO_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    if url:
        cfg.attributes["url"] = url
    return cfg


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Bring the schema to ``revision`` as the owner role. Running it again is a no-op."""
    command.upgrade(alembic_config(url), revision)


def current_revision(url: str | None = None) -> str | None:
    """The revision the database is at (None before the first upgrade)."""
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine, pool

    from app.db.urls import sqlalchemy_url
    from app.settings import get_settings

    engine = create_engine(sqlalchemy_url(url or get_settings().database_url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()
