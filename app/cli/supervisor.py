"""Keep ``sbc run``'s child processes serving: a crashed child is restarted, the others go on.

Why: one process dying (a segfault in a C extension, the OOM killer, a bug that escapes every
handler) must cost the product that process for a second, not everything. The API keeps
answering while the controller restarts, and the controller's start-up reconciliation
(app/calls/recovery.py) records the calls its predecessor left behind.

Restart policy: wait ``RESTART_BACKOFF_INITIAL_SECONDS`` before the first restart, doubling up
to ``RESTART_BACKOFF_MAX_SECONDS`` while the child keeps crashing; a child that stayed up for
``STABLE_AFTER_SECONDS`` is considered healthy again (backoff and count reset). A child that
crashes ``MAX_FAST_CRASHES`` times in a row, each within ``STABLE_AFTER_SECONDS`` of starting,
is broken (bad configuration, a port taken): restarting it forever would only hide that, so
the supervisor gives up loudly — stops every child and exits non-zero, for the service manager
(systemd, compose ``restart:``) and the operator to see.
"""
from __future__ import annotations

import logging
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

log = logging.getLogger("sbc.run")

RESTART_BACKOFF_INITIAL_SECONDS = 0.5
RESTART_BACKOFF_MAX_SECONDS = 30.0
STABLE_AFTER_SECONDS = 30.0
MAX_FAST_CRASHES = 5
STOP_GRACE_SECONDS = 10.0
POLL_SECONDS = 0.2


class GaveUp(Exception):
    """A child kept crashing right after start: the supervisor stopped everything."""


@dataclass
class Child:
    """One supervised process: its name, how to start it, and its crash history."""
    name: str
    argv: Sequence[str]
    proc: Optional[subprocess.Popen] = None
    started_at: float = 0.0
    fast_crashes: int = 0
    restarts: int = 0
    restart_at: Optional[float] = None  # when a crashed child is due to start again
    backoff: float = field(default=RESTART_BACKOFF_INITIAL_SECONDS)


class Supervisor:
    def __init__(self, children: Sequence[Child], *,
                 spawn: Callable[[Sequence[str]], subprocess.Popen] = subprocess.Popen,
                 clock: Callable[[], float] = time.monotonic,
                 max_fast_crashes: int = MAX_FAST_CRASHES,
                 stable_after: float = STABLE_AFTER_SECONDS) -> None:
        self.children = list(children)
        self._spawn = spawn
        self._clock = clock
        self.max_fast_crashes = max_fast_crashes
        self.stable_after = stable_after
        self.stopping = False

    def start(self) -> None:
        for child in self.children:
            self._start(child)

    def _start(self, child: Child) -> None:
        child.proc = self._spawn(list(child.argv))
        child.started_at = self._clock()
        child.restart_at = None
        log.info("started %s (pid %d)", child.name, child.proc.pid)

    def poll(self) -> None:
        """One supervision step: notice exits, schedule and perform restarts.
        Raises GaveUp when a child crashed too often too fast."""
        now = self._clock()
        for child in self.children:
            if child.restart_at is not None:
                if now >= child.restart_at:
                    child.restarts += 1
                    self._start(child)
                    log.warning("restarted %s (restart #%d, pid %d)", child.name, child.restarts,
                                child.proc.pid)
                continue
            code = child.proc.poll() if child.proc is not None else None
            if code is None:
                if child.fast_crashes and now - child.started_at >= self.stable_after:
                    child.fast_crashes = 0  # healthy again: next crash restarts quickly
                    child.backoff = RESTART_BACKOFF_INITIAL_SECONDS
                continue
            uptime = now - child.started_at
            if uptime < self.stable_after:
                child.fast_crashes += 1
            else:
                child.fast_crashes = 1
                child.backoff = RESTART_BACKOFF_INITIAL_SECONDS
            if child.fast_crashes >= self.max_fast_crashes:
                log.critical("%s exited with %s %d times in a row within %.0fs of starting; "
                             "giving up and stopping everything", child.name, _describe(code),
                             child.fast_crashes, self.stable_after)
                raise GaveUp(f"{child.name} keeps crashing ({child.fast_crashes} fast crashes)")
            log.error("%s exited with %s after %.1fs; restarting in %.1fs (crash %d of %d allowed "
                      "in a row)", child.name, _describe(code), uptime, child.backoff,
                      child.fast_crashes, self.max_fast_crashes - 1)
            child.restart_at = now + child.backoff
            child.backoff = min(child.backoff * 2, RESTART_BACKOFF_MAX_SECONDS)

    def run(self) -> None:
        """Supervise until ``stopping`` is set (signal) or a child is given up on."""
        self.start()
        try:
            while not self.stopping:
                self.poll()
                time.sleep(POLL_SECONDS)
        finally:
            self.stop_all()

    def stop_all(self) -> None:
        running = [c.proc for c in self.children if c.proc is not None and c.proc.poll() is None]
        for proc in running:
            proc.terminate()
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for proc in running:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def run_until_signalled(supervisor: Supervisor, name: str) -> None:
    """Run the children until SIGTERM/SIGINT (which stop them in order), as ``sbc <name>``.
    A child that keeps dying ends the command with a clear error instead of a restart loop."""
    import click

    def stop(*_: object) -> None:
        supervisor.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        supervisor.run()
    except GaveUp as exc:
        logging.getLogger(f"sbc.{name}").critical("sbc %s stopped: %s", name, exc)
        raise click.ClickException(f"stopped because {exc}") from None


def _describe(code: int) -> str:
    return f"signal {-code}" if code < 0 else f"status {code}"
