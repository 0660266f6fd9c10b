"""Overload at the door (app/voice/overload.py), the setup guard's cancellation (begin_session) and
orphan channel detection (app/voice/orphans.py), against the simulator. The real-switch proofs are
tests/realswitch/test_overload.py."""
from __future__ import annotations

import logging

import gevent
import gevent.monkey

from app.voice.orphans import orphan_candidates
from app.voice.overload import SHED_LOG_INTERVAL_SECONDS, LoopLagProbe, SetupGate, refuse_unanswered
from tests.plugins.eventually import eventually
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
        gevent.sleep(0.4)  # scenario: the call lasts longer than the guard below
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


class ManualClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _gate(in_flight, probe, *, max_in_flight=4, max_lag_ms=200, clock=None):
    return SetupGate(lambda: in_flight[0], probe, max_in_flight=lambda: max_in_flight,
                     max_lag_ms=lambda: max_lag_ms, **({"clock": clock} if clock else {}))


def test_the_gate_refuses_only_while_setups_in_flight_exceed_the_ceiling():
    in_flight = [5]
    gate = _gate(in_flight, LoopLagProbe(clock=ManualClock()), max_in_flight=4)
    assert gate.refusal() == "5 setups in flight (limit 4)"
    in_flight[0] = 4  # at the ceiling is still taken
    assert gate.refusal() is None


def test_the_gate_sheds_on_sustained_loop_lag_not_on_one_slow_step_and_forgets_it_after_a_second():
    clock = ManualClock()
    probe = LoopLagProbe(interval=0.1, clock=clock)
    gate = _gate([0], probe, max_lag_ms=200)

    def tick(late_ms: float) -> None:
        slept_at = clock.now
        clock.now += 0.1 + late_ms / 1000
        probe.record(slept_at, clock.now)

    for _ in range(10):
        tick(0)
    tick(500)  # one slow step (a big parse, a GC pause), then on time again
    for _ in range(4):
        tick(0)
    assert 0 < probe.lag_ms < 200  # seen, but the mean of the last second stays low
    assert gate.refusal() is None
    for _ in range(9):
        tick(300)  # a saturated loop is late on every sample
    assert gate.refusal() == f"event loop {probe.lag_ms:.0f} ms late (limit 200 ms)"
    assert probe.lag_ms > 200
    clock.now += 1.01  # no sample in the last second: the window forgets it
    assert probe.lag_ms == 0.0
    assert gate.refusal() is None


class CountingProbe(LoopLagProbe):
    """The product's probe, counting its samples so the test knows it is running."""

    samples = 0

    def record(self, slept_at: float, woke_at: float) -> None:
        super().record(slept_at, woke_at)
        self.samples += 1


def test_the_probe_measures_a_hub_held_by_a_blocking_call():
    probe = CountingProbe(interval=0.1).start()
    try:
        gate = _gate([0], probe, max_lag_ms=200)
        eventually(lambda: probe.samples >= 2, timeout=5, what="the probe sampling the hub")
        assert gate.refusal() is None
        blocking_sleep(0.8)  # hold the hub, as a CPU-bound burst would
        reason = eventually(gate.refusal, timeout=5, what="the gate refusing on loop lag")
        assert reason.startswith("event loop ") and reason.endswith("ms late (limit 200 ms)")
        eventually(lambda: gate.refusal() is None, timeout=5,
                   what="the lag forgotten a second after the hub is free again")
    finally:
        probe.stop()


def test_turning_away_refuses_each_call_but_logs_once_per_interval_with_the_count(caplog):
    clock = ManualClock()
    gate = _gate([9], LoopLagProbe(clock=clock), clock=clock)
    refused = []
    caplog.set_level(logging.WARNING, logger="app.voice.overload")
    for _ in range(3):
        gate.turn_away(lambda: refused.append(1), "9 setups in flight (limit 4)")
        clock.now += 1.0
    clock.now += SHED_LOG_INTERVAL_SECONDS  # the interval has passed: the next one logs
    gate.turn_away(lambda: refused.append(1), "9 setups in flight (limit 4)")
    assert len(refused) == gate.shed == 4
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith("overloaded: turned away 1 call(s) with 503")
    assert warnings[1].startswith("overloaded: turned away 3 call(s) with 503 in the last 8 s")


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
