"""Each of ``sbc controller --processes N``'s children opens 1/N of one process's database
connections per pool (issue 27: 8 controller processes with 20 + 10 connections per pool each
ran PostgreSQL's default 100 out: "remaining connection slots are reserved"). Real PostgreSQL."""
from __future__ import annotations

from contextlib import ExitStack

import pytest
from sqlalchemy import text
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.db import engine as db_engine

ONE_PROCESS = db_engine.POOL_SIZE + db_engine.POOL_OVERFLOW  # 30 per pool


@pytest.fixture
def sibling_pools():
    """share_pools for this test only: fresh engines before and after."""
    db_engine.reset_engines()
    yield db_engine.share_pools
    db_engine.share_pools(1)
    db_engine.reset_engines()


@pytest.mark.parametrize("processes", [2, 3, 4, 8, 10])
def test_n_sibling_controllers_together_open_no_more_connections_per_pool_than_one_process(processes):
    kept, extra = db_engine.shared_pool_limits(processes)
    assert processes * (kept + extra) <= ONE_PROCESS
    assert kept >= db_engine.SHARED_POOL_MIN_SIZE and extra >= db_engine.SHARED_POOL_MIN_OVERFLOW


def test_one_process_keeps_the_whole_pool():
    assert db_engine.shared_pool_limits(1) == (db_engine.POOL_SIZE, db_engine.POOL_OVERFLOW)
    assert db_engine.pool_limits() == (db_engine.POOL_SIZE, db_engine.POOL_OVERFLOW)


def test_a_child_of_eight_opens_at_most_three_connections_per_pool_and_a_fourth_caller_waits(
        sibling_pools, monkeypatch):
    sibling_pools(8)
    engine = db_engine.app_engine()
    kept, extra = db_engine.pool_limits()
    assert (kept, extra) == (2, 1)
    with ExitStack() as held:
        for _ in range(kept + extra):  # three callers at once each get a connection
            conn = held.enter_context(engine.connect())
            assert conn.execute(text("SELECT 1")).scalar() == 1
        monkeypatch.setattr(engine.pool, "_timeout", 0.2)  # QueuePool's wait, 30 s by default
        with pytest.raises(PoolTimeout):
            engine.connect()
    with engine.connect() as conn:  # returned connections serve the next caller
        assert conn.execute(text("SELECT 1")).scalar() == 1
