"""The per-call database path leaves nothing behind for SQLAlchemy's event registry.

Why: statements built per call (an upsert's ``excluded`` alias copies the table's columns, each
registering listeners) and an ``event.listen`` per emitting transaction grew the registry by
about five entries per call until Python's cycle collector freed them: ~750 objects of cyclic
garbage per call on the simulator, and full collections that grew with the call rate (a
controller's event loop stalls for the whole collection)."""
from __future__ import annotations

import gc
import uuid

from sqlalchemy.event import registry

from app.calls.records import CallContext, write_call_record
from app.db.engine import platform_session
from app.events import outbox
from app.events.exchanges import CALL_EVENTS
from tests.calls.captures import as_new_leg, hangup_events


def _listeners() -> int:
    return sum(len(v) for v in registry._collection_to_key.values())


def test_given_many_legs_recorded_then_no_sqlalchemy_listener_is_left_per_call(make_account):
    account = make_account()
    (event,) = hangup_events("outbound_answer_playback_hangup")

    def one_call() -> None:
        ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), direction="inbound")
        assert write_call_record(as_new_leg(event), ctx) is not None
        rows = [outbox.event_row(CALL_EVENTS, "call.started", {"n": 1}, account_id=account.id,
                                 trace_id=ctx.trace_id)]
        with platform_session() as session:
            outbox.insert_rows(session, rows)

    one_call()  # statements built once per process
    gc.disable()  # a collection must not hide a per-call growth
    try:
        before = _listeners()
        for _ in range(20):
            one_call()
        after = _listeners()
    finally:
        gc.enable()
    assert after == before


def test_given_a_leg_recorded_then_it_took_one_statement_execution(make_account):
    """The whole tenant transaction (tenant setting, record, summary, call.ended, meters) is
    one script in one execute: one round trip on the hang-up path, no BEGIN/COMMIT of its own."""
    from sqlalchemy import event

    from app.db.engine import AUTOCOMMIT_POOL, _engine
    from app.settings import get_settings

    account = make_account()
    (event_,) = hangup_events("outbound_answer_playback_hangup")
    executes: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        executes.append(statement)

    url = get_settings().app_database_url
    engines = [_engine(url), _engine(url, AUTOCOMMIT_POOL)]
    for engine in engines:
        event.listen(engine, "before_cursor_execute", count)
    try:
        ctx = CallContext(account_id=account.id, trace_id=uuid.uuid4(), direction="inbound")
        assert write_call_record(as_new_leg(event_), ctx) is not None
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", count)
    assert len(executes) == 1
