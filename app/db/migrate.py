"""Apply the Alembic chain programmatically (``sbc db upgrade``, test setup, containers at boot)."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from app.resources import product_file

REPO_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str | None = None) -> Config:
    """Config pointing at the repo's migrations; ``url`` defaults to settings.database_url.
    The URL travels in ``attributes`` (not the ini) so '%' in passwords needs no escaping."""
    cfg = Config(str(product_file("alembic.ini")))
    cfg.set_main_option("script_location", str(product_file("migrations")))
    if url:
        cfg.attributes["url"] = url
    return cfg


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Bring the schema to ``revision`` as the owner role. Running it again is a no-op."""
    command.upgrade(alembic_config(url), revision)


def ensure_database(url: str | None = None) -> bool:
    """Create the database named in ``url`` when it is missing (first ``sbc run`` on a fresh
    machine); returns True when it was created. Needs CREATEDB on the owner role."""
    import psycopg2
    from psycopg2 import sql
    from sqlalchemy.engine import make_url

    from app.settings import get_settings

    target = make_url(url or get_settings().database_url)
    maintenance = target.set(database="postgres")
    conn = psycopg2.connect(maintenance.render_as_string(hide_password=False)
                            .replace("postgresql+psycopg2://", "postgresql://"))
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (target.database,))
            if cur.fetchone():
                return False
            cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(target.database)))
            return True
    finally:
        conn.close()


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
