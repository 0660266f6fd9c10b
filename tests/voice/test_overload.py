"""Overload at the door (app/voice/overload.py), the setup guard's cancellation (begin_session) and
orphan channel detection (app/voice/orphans.py), against the simulator. The real-switch proofs are
tests/realswitch/test_overload.py."""
from __future__ import annotations

import gevent
import gevent.monkey

from app.voice.orphans import orphan_candidates
from app.voice.overload import LoopLagProbe, SetupGate, refuse_unanswered
from tests.simulator import Call

# the unpatched sleep blocks the thread without yielding, so no greenlet (the probe's timer) runs
blocking_sleep = gevent.monkey.get_original("time", "sleep")


def test_a_shed_call_is_hung_up_unanswered_with_503_before_any_session_starts(
        outbound_server, simulate_call):
    server = outbound_server(refuse_unanswered)
    call = simulate_call(Call(), server)
    assert call.wait(5)
    names = [c.name for c in call.commands]
    assert names[:2] == ["connect", "sendmsg"]
    assert call.commands[1].headers.get("hangup-cause") == "NORMAL_CIRCUIT_CONGESTION"
    assert call.channel.hangup_cause == "NORMAL_CIRCUIT_CONGESTION"
    assert not call.setup_guard_fired


def test_the_session_cancels_the_setup_guard_so_a_long_call_is_not_refused(
        outbound_server, simulate_call):
    replies = []

    def app(conn):
        conn.connect()
        replies.append(conn.begin_session())
        gevent.sleep(0.4)  # longer than the guard below
        conn.hangup("NORMAL_CLEARING")
        conn.wait_hangup_complete(timeout=5)

    server = outbound_server(app)
    call = simulate_call(Call(setup_guard=0.2), server)
    assert call.wait(5)
    assert replies == ["+OK Deleted: 1"]
    assert not call.setup_guard_fired
    assert call.channel.hangup_cause == "NORMAL_CLEARING"


def test_a_leg_without_the_guard_gets_no_sched_del(outbound_server, simulate_call):
    replies = []

    def app(conn):
        conn.connect()
        replies.append(conn.begin_session())
        conn.hangup("NORMAL_CLEARING")
        conn.wait_hangup_complete(timeout=5)

    call = simulate_call(Call(setup_guard=None), outbound_server(app))
    assert call.wait(5)
    assert replies == [None]
    assert not [c for c in call.commands if c.line.startswith("api sched_del")]


def test_a_socket_nobody_serves_is_refused_by_the_guard(outbound_server, simulate_call):
    server = outbound_server(lambda conn: gevent.sleep(2))
    call = simulate_call(Call(setup_guard=0.2), server)
    gevent.sleep(0.5)
    assert call.setup_guard_fired


def test_the_gate_sheds_on_setups_in_flight_then_on_sustained_loop_lag():
    probe = LoopLagProbe(interval=0.1).start()
    try:
        in_flight = [5]
        gate = SetupGate(lambda: in_flight[0], probe, max_in_flight=lambda: 4,
                         max_lag_ms=lambda: 200)
        assert "5 setups in flight" in gate.refusal()
        in_flight[0] = 4
        gevent.sleep(0.35)
        assert gate.refusal() is None
        blocking_sleep(0.8)  # hold the hub, as a CPU-bound burst would
        gevent.sleep(0.15)
        assert "event loop" in (gate.refusal() or "")
        gevent.sleep(1.2)  # the window forgets it
        assert gate.refusal() is None
    finally:
        probe.stop()


def test_orphans_are_old_socket_channels_without_a_session_here():
    now = 1_000_000.0
    rows = [
        {"uuid": "a", "application": "socket", "created_epoch": str(int(now - 30))},
        {"uuid": "b", "application": "socket", "created_epoch": str(int(now - 2))},   # young
        {"uuid": "c", "application": "socket", "created_epoch": str(int(now - 30))},  # ours
        {"uuid": "d", "application": "playback", "created_epoch": str(int(now - 30))},
        {"uuid": "", "application": "socket", "created_epoch": str(int(now - 30))},
    ]
    assert orphan_candidates(rows, {"c"}, now=now, grace=10) == ["a"]
