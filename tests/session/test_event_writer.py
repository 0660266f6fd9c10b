"""The controller's shared event writer: batched commits, per-call order, bad events isolated,
nothing lost while PostgreSQL is unavailable."""
from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Iterator

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from app.db.urls import sqlalchemy_url
from app.settings import get_settings
from app.voice.call_events import CallEvents, EventWriter


def _keys(owner_conn, trace_id) -> list[str]:
    return [r[0] for r in owner_conn.execute(text(
        "SELECT routing_key FROM event_outbox WHERE body->>'trace_id' = :t ORDER BY created_at, id"),
        {"t": str(trace_id)})]


def test_given_two_calls_interleaving_when_flushed_then_each_calls_events_keep_their_order(owner_conn):
    writer = EventWriter()
    a, b = CallEvents(writer, uuid.uuid4()), CallEvents(writer, uuid.uuid4())
    for key in ("call.started", "call.answered", "call.hold", "call.resumed"):
        a.emit(key, {"callId": "a"})
        b.emit(key, {"callId": "b"})
    a.close()
    assert _keys(owner_conn, a.trace_id) == ["call.started", "call.answered", "call.hold", "call.resumed"]
    assert _keys(owner_conn, b.trace_id) == ["call.started", "call.answered", "call.hold", "call.resumed"]
    assert writer.batches >= 1


def test_given_an_invalid_event_in_a_batch_when_written_then_the_others_still_reach_the_outbox(owner_conn):
    writer = EventWriter()
    call = CallEvents(writer, uuid.uuid4())
    call.emit("call.started", {"callId": "x"})
    call.emit("not.a.known.key", {"callId": "x"})
    call.emit("call.answered", {"callId": "x"})
    call.close()
    assert _keys(owner_conn, call.trace_id) == ["call.started", "call.answered"]


def test_given_an_unserialisable_payload_when_written_then_the_writer_keeps_serving_calls(owner_conn):
    writer = EventWriter()
    call = CallEvents(writer, uuid.uuid4())
    call.emit("call.started", {"callId": "x"})
    call.emit("call.answered", {"callId": "x", "details": {1, 2}})  # a set is not JSON
    call.emit("call.hold", {"callId": "x"})
    assert writer.flush(timeout=5), "the writer greenlet died"
    later = CallEvents(writer, uuid.uuid4())
    later.emit("call.started", {"callId": "y"})
    assert writer.flush(timeout=5)
    assert _keys(owner_conn, call.trace_id) == ["call.started", "call.hold"]
    assert _keys(owner_conn, later.trace_id) == ["call.started"]


class _OutageRole:
    """A login role of its own for one writer (member of sbc_platform, so it may insert into
    the outbox), which the test can lock out: PostgreSQL is then unavailable to that writer
    alone — its pooled connections are terminated and new logins refused — while every other
    test keeps its own roles."""

    def __init__(self, owner_engine) -> None:
        self._owner = owner_engine
        self.name = f"sbc_writer_{uuid.uuid4().hex[:10]}"
        self._admin(f"CREATE ROLE {self.name} LOGIN IN ROLE sbc_platform")
        self.engine = create_engine(  # as app.db.engine builds them
            make_url(sqlalchemy_url(get_settings().database_url)).set(username=self.name),
            pool_size=2, pool_pre_ping=True, hide_parameters=True)
        self._sessions = sessionmaker(bind=self.engine, expire_on_commit=False)

    @contextmanager
    def session_scope(self) -> Iterator[Session]:
        session = self._sessions()
        try:
            with session.begin():
                yield session
        finally:
            session.close()

    def go_down(self) -> None:
        self._admin(f"ALTER ROLE {self.name} NOLOGIN")
        self._admin(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{self.name}'")

    def come_back(self) -> None:
        self._admin(f"ALTER ROLE {self.name} LOGIN")

    def drop(self) -> None:
        self.engine.dispose()
        self.go_down()
        self._admin(f"DROP ROLE {self.name}")

    def _admin(self, sql: str) -> None:
        with self._owner.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(sql))


@pytest.fixture
def outage(owner_engine) -> Iterator[_OutageRole]:
    role = _OutageRole(owner_engine)
    yield role
    role.drop()


def test_given_postgresql_unavailable_when_calls_emit_then_no_event_is_lost_and_order_is_kept_once_back(
        owner_conn, outage):
    writer = EventWriter(outage.session_scope, retry_initial=0.02, retry_max=0.2)
    a, b = CallEvents(writer, uuid.uuid4()), CallEvents(writer, uuid.uuid4())
    a.emit("call.started", {"callId": "a"})
    assert writer.flush(timeout=5)  # the writer's pool holds a live connection now

    outage.go_down()
    for key in ("call.answered", "call.hold", "call.resumed", "call.hold", "call.resumed"):
        a.emit(key, {"callId": "a"})
        b.emit(key, {"callId": "b"})
    assert not writer.flush(timeout=0.5), "flush honours its timeout while the outbox is away"
    assert writer.retries >= 2 and writer.held == 10
    assert _keys(owner_conn, a.trace_id) == ["call.started"]

    outage.come_back()
    assert writer.flush(timeout=10)
    assert _keys(owner_conn, a.trace_id) == [
        "call.started", "call.answered", "call.hold", "call.resumed", "call.hold", "call.resumed"]
    assert _keys(owner_conn, b.trace_id) == [
        "call.answered", "call.hold", "call.resumed", "call.hold", "call.resumed"]
    assert writer.held == 0 and writer.dropped_overflow == 0 and writer.dropped_bad == 0


def test_given_the_writer_full_during_an_outage_when_more_events_come_then_the_newest_are_dropped_and_counted(
        owner_conn, outage, caplog):
    writer = EventWriter(outage.session_scope, max_held=4, retry_initial=0.02, retry_max=0.2)
    call = CallEvents(writer, uuid.uuid4())
    outage.go_down()
    for key in ("call.started", "call.answered", "call.hold", "call.resumed", "call.hold", "call.resumed"):
        call.emit(key, {"callId": "x"})
    assert writer.dropped_overflow == 2
    assert any("dropped 1 new event" in r.getMessage() for r in caplog.records)

    outage.come_back()
    assert writer.flush(timeout=10)
    assert _keys(owner_conn, call.trace_id) == ["call.started", "call.answered", "call.hold", "call.resumed"]
    call.emit("call.hold", {"callId": "x"})  # room again once written
    assert writer.flush(timeout=5)
    assert _keys(owner_conn, call.trace_id)[-1] == "call.hold"


def test_given_a_row_the_database_rejects_when_written_then_only_that_event_is_dropped(owner_conn):
    writer = EventWriter()
    call = CallEvents(writer, uuid.uuid4())
    call.emit("call.started", {"callId": "x"})
    call.emit("call.answered", {"callId": "x", "note": "nul \x00 byte"})  # jsonb cannot store \u0000
    call.emit("call.hold", {"callId": "x"})
    assert writer.flush(timeout=5)
    later = CallEvents(writer, uuid.uuid4())
    later.emit("call.started", {"callId": "y"})
    assert writer.flush(timeout=5), "the bad row wedged the writer"
    assert _keys(owner_conn, call.trace_id) == ["call.started", "call.hold"]
    assert _keys(owner_conn, later.trace_id) == ["call.started"]
    assert writer.dropped_bad == 1
