"""``sbc db upgrade``: apply Alembic migrations as the owner role (idempotent)."""
import click


@click.group()
def db() -> None:
    """Database schema."""


@db.command()
def upgrade() -> None:
    """Apply all migrations (safe to run again)."""
    from app.db.migrate import ensure_database
    from app.db.migrate import upgrade as run_upgrade

    ensure_database()
    run_upgrade()
    click.echo("database is at the latest migration")
