"""``sbc run``'s supervisor with real child processes: a crashed child comes back, the others
are untouched, a child that keeps crashing at start makes it give up."""
from __future__ import annotations

import logging
import sys
import time

import pytest

from app.cli.supervisor import Child, GaveUp, Supervisor
from tests.plugins.eventually import eventually

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
CRASHER = [sys.executable, "-c", "import sys; sys.exit(3)"]


def test_given_a_child_killed_when_supervised_then_it_is_restarted_and_the_other_keeps_running(caplog):
    caplog.set_level(logging.INFO, logger="sbc.run")
    victim, other = Child("controller", SLEEPER), Child("api", SLEEPER)
    sup = Supervisor([victim, other])
    sup.start()
    try:
        first_pid, other_pid = victim.proc.pid, other.proc.pid
        victim.proc.kill()

        def restarted() -> bool:
            sup.poll()
            return victim.proc.pid != first_pid and victim.proc.poll() is None

        eventually(restarted, what="the killed child restarted")
        assert other.proc.pid == other_pid and other.proc.poll() is None
        assert victim.restarts == 1
        assert any("controller exited with signal 9" in r.message for r in caplog.records)
        assert any("restarted controller" in r.message for r in caplog.records)
    finally:
        sup.stop_all()


def test_given_a_child_crashing_at_every_start_when_supervised_then_it_gives_up_and_stops_the_others(caplog):
    crasher, other = Child("workers", CRASHER), Child("api", SLEEPER)
    sup = Supervisor([crasher, other], max_fast_crashes=3)
    sup.start()
    try:
        with pytest.raises(GaveUp):
            eventually(sup.poll, timeout=20, what="the supervisor giving up (poll raises GaveUp)")
        assert crasher.restarts == 2  # started 3 times, crashed 3 times
    finally:
        sup.stop_all()
    assert other.proc.poll() is not None, "the other children are stopped when it gives up"
    assert any(r.levelname == "CRITICAL" and "giving up" in r.message for r in caplog.records)


def test_given_a_child_stable_for_a_while_when_it_crashes_then_its_crash_count_starts_over():
    child = Child("controller", SLEEPER)
    sup = Supervisor([child], max_fast_crashes=2, stable_after=0.3)
    sup.start()
    try:
        for _ in range(3):  # each crash after a stable run: never given up on
            time.sleep(0.4)  # scenario: the child runs past stable_after (0.3 s) before it crashes
            sup.poll()
            pid = child.proc.pid
            child.proc.kill()
            child.proc.wait()

            def back() -> bool:
                sup.poll()
                return child.proc.pid != pid
            eventually(back, what="the crashed child restarted")
        assert child.restarts == 3
    finally:
        sup.stop_all()
