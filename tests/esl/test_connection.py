"""EslConnection edge cases over a real socket pair, with the peer scripted byte by byte."""
from __future__ import annotations

import gevent
import pytest
from gevent import socket

from esl.connection import EslConnection
from esl.errors import CommandTimeout, ConnectionLost, NotConnected
from esl.protocol import encode_event_plain
from tests.plugins.eventually import eventually


def _pair(**kw):
    a, b = socket.socketpair()
    conn = EslConnection(a, name="test", **kw)
    conn.start()
    return conn, b


def _read_command(peer) -> bytes:
    buf = b""
    while b"\n\n" not in buf:
        buf += peer.recv(4096)
    return buf


def _read_commands(peer, count: int) -> bytes:
    """Read until the peer has received ``count`` commands (each ends with a blank line)."""
    buf = b""
    while buf.count(b"\n\n") < count:
        buf += peer.recv(4096)
    return buf


def _reply(text: str) -> bytes:
    return f"Content-Type: command/reply\nReply-Text: {text}\n\n".encode()


def test_given_command_timed_out_when_its_reply_arrives_late_then_next_command_gets_its_own_reply():
    conn, peer = _pair()
    try:
        with pytest.raises(CommandTimeout):
            conn.send_command("api slow", timeout=0.1)
        waiter = gevent.spawn(conn.send_command, "api fast", timeout=5)
        _read_command(peer)
        peer.sendall(_reply("late answer to slow") + _reply("answer to fast"))
        assert waiter.get(timeout=5).reply_text == "answer to fast"
    finally:
        conn.close()


def test_given_peer_closes_when_commands_pending_then_all_fail_with_connection_lost():
    conn, peer = _pair()
    waiters = [gevent.spawn(conn.send_command, f"api c{i}", timeout=30) for i in range(3)]
    with gevent.Timeout(5):
        _read_commands(peer, 3)  # all three are sent and pending
    peer.close()
    gevent.joinall(waiters, timeout=5)
    assert all(isinstance(w.exception, ConnectionLost) for w in waiters)
    with pytest.raises(NotConnected):
        conn.send_command("api after", timeout=1)


def test_given_handler_queue_full_when_events_keep_coming_then_reader_still_answers_commands():
    conn, peer = _pair(queue_size=1)
    conn.on("HEARTBEAT", lambda ev: gevent.sleep(5))  # scenario: a handler stuck for 5 s
    try:
        peer.sendall(b"".join(encode_event_plain([("Event-Name", "HEARTBEAT")]) for _ in range(20)))
        waiter = gevent.spawn(conn.send_command, "api status", timeout=5)
        _read_command(peer)
        peer.sendall(_reply("+OK up"))
        assert waiter.get(timeout=5).reply_text == "+OK up"
        assert conn.events_received == 20
        assert conn.dropped_events >= 18  # one in the handler, one queued, the rest dropped
    finally:
        conn.close()


def test_given_wait_for_predicate_when_matching_event_arrives_then_it_is_returned():
    conn, peer = _pair()
    try:
        waiter = gevent.spawn(conn.wait_for, lambda ev: ev.get("Job-UUID") == "j2", 5)
        eventually(lambda: len(conn._waiters) == 1, timeout=5, what="wait_for registered")
        peer.sendall(encode_event_plain([("Event-Name", "BACKGROUND_JOB"), ("Job-UUID", "j1")], "+OK a\n")
                     + encode_event_plain([("Event-Name", "BACKGROUND_JOB"), ("Job-UUID", "j2")], "+OK b\n"))
        assert waiter.get(timeout=5).body == "+OK b\n"
    finally:
        conn.close()


def test_given_wait_for_when_connection_closes_then_it_raises_instead_of_hanging():
    conn, peer = _pair()
    waiter = gevent.spawn(conn.wait_for, "CHANNEL_ANSWER", 30)
    eventually(lambda: len(conn._waiters) == 1, timeout=5, what="wait_for registered")
    peer.close()
    waiter.join(timeout=5)
    assert isinstance(waiter.exception, ConnectionLost)
