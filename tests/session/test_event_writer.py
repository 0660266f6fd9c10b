"""The controller's shared event writer: batched commits, per-call order, bad events isolated."""
from __future__ import annotations

import uuid

from sqlalchemy import text

from esl.call_events import CallEvents, EventWriter


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
