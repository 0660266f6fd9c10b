"""The Alembic chain: one head, models and migrations agree, upgrades are idempotent and safe
to run concurrently, and a downgrade to base really empties the schema."""
from __future__ import annotations

import subprocess
import sys
import uuid
from typing import Iterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from click.testing import CliRunner
from sqlalchemy import create_engine, pool, text

from app.cli import main
from app.db.migrate import REPO_ROOT, alembic_config, current_revision, upgrade
from app.db.urls import sqlalchemy_url
from app.models import Base
from tests.plugins.database import _maintenance, _quote_ident

CATALOGUE_SNAPSHOT = """
SELECT 'column', table_name || '.' || column_name || ':' || data_type || ':' || is_nullable || ':' || coalesce(column_default, '')
  FROM information_schema.columns WHERE table_schema = 'public'
UNION ALL SELECT 'constraint', conrelid::regclass || '.' || conname || ':' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = 'public'::regnamespace
UNION ALL SELECT 'index', indexname || ':' || indexdef FROM pg_indexes WHERE schemaname = 'public'
UNION ALL SELECT 'policy', tablename || '.' || policyname || ':' || coalesce(qual, '') || ':' || coalesce(with_check, '')
  FROM pg_policies WHERE schemaname = 'public'
UNION ALL SELECT 'grant', table_name || ':' || grantee || ':' || privilege_type
  FROM information_schema.role_table_grants WHERE table_schema = 'public'
UNION ALL SELECT 'function', proname || ':' || prosecdef FROM pg_proc WHERE pronamespace = 'public'::regnamespace
ORDER BY 1, 2
"""


def _snapshot(url: str) -> list[tuple[str, str]]:
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(CATALOGUE_SNAPSHOT))]
    finally:
        engine.dispose()


@pytest.fixture
def scratch_url(database: str) -> Iterator[str]:
    """An empty database of its own, for tests that migrate from nothing."""
    name = f"{database.rsplit('/', 1)[1]}_m{uuid.uuid4().hex[:6]}"
    _maintenance(f"CREATE DATABASE {_quote_ident(name)}")
    try:
        yield database.rsplit("/", 1)[0] + "/" + name
    finally:
        _maintenance(f"DROP DATABASE IF EXISTS {_quote_ident(name)} WITH (FORCE)")


def test_the_revision_chain_has_exactly_one_head():
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    assert len(heads) == 1


def test_given_migrated_database_when_upgrading_again_then_schema_is_unchanged(database):
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    before = _snapshot(database)
    upgrade(database)
    assert current_revision(database) == head
    assert _snapshot(database) == before
    assert any(kind == "policy" for kind, _ in before)


def test_given_sbc_db_upgrade_run_twice_then_both_succeed(database):
    for _ in range(2):
        result = CliRunner().invoke(main, ["db", "upgrade"])
        assert result.exit_code == 0, result.output
        assert "latest migration" in result.output


def test_given_head_schema_then_models_and_migrations_agree(owner_engine):
    with owner_engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def test_given_two_processes_upgrading_an_empty_database_at_once_then_both_succeed(scratch_url):
    """api and controller containers both run ``sbc db upgrade`` at boot: the advisory lock
    in migrations/env.py makes the second wait and then find nothing to do."""
    code = "import sys; from app.db.migrate import upgrade; upgrade(sys.argv[1])"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, scratch_url], cwd=REPO_ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outcomes = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    assert [rc for rc, _ in outcomes] == [0, 0], outcomes
    assert current_revision(scratch_url) == ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_given_head_when_downgrading_to_base_then_every_table_is_gone_and_upgrade_works_again(scratch_url):
    from alembic import command

    upgrade(scratch_url)
    command.downgrade(alembic_config(scratch_url), "base")
    remaining = [t for kind, t in _snapshot(scratch_url) if kind == "column" and not t.startswith("alembic_version.")]
    assert remaining == []
    upgrade(scratch_url)
    assert current_revision(scratch_url) is not None
