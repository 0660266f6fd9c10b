"""Turn calls away at the door when this controller cannot set them up promptly.

Under overload the cost of a call shows up as ringing: sockets queue in the accept backlog and
in half-finished setups while the event loop is saturated, and the caller hears nothing until
the carrier gives up (measured on the real switch: 5 s p50 at 75 calls/s before this). A
refused call is better than a late one: ``connect`` and a ``sendmsg`` hangup with
NORMAL_CIRCUIT_CONGESTION, pipelined (one round trip), answer the INVITE with 503 at once and
the carrier fails over to another route. Both are needed (measured on FreeSWITCH 1.10.12): a
socket merely closed leaves the ``async`` call parked after "Socket Error!", and commands sent
before ``connect`` are not acted on until the socket closes; only the dialplan's setup guard
would end such a call, seconds later.

Two signals, either sheds:
- setups in flight — sockets accepted but neither admitted nor refused yet;
- event-loop lag — how late a 100 ms timer fires (a saturated CPU, a blocking call).
Both limits are ``cluster_config`` keys (``controller.max_setups_in_flight``,
``controller.max_loop_lag_ms``) so an operator can tune them on a running controller.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Optional

import gevent

from app import limits
from esl.greenlet_task import GreenletTask

log = logging.getLogger(__name__)

SHED_LOG_INTERVAL_SECONDS = 5.0
SHED_CAUSE = "NORMAL_CIRCUIT_CONGESTION"  # SIP 503: the carrier tries its next route
SHED_REPLY_TIMEOUT_SECONDS = 2.0


def refuse_unanswered(conn) -> None:
    """``connect`` + ``sendmsg`` hangup (503) on a fresh outbound socket, then close it."""
    from esl.errors import EslError

    try:
        conn.refuse(SHED_CAUSE, timeout=SHED_REPLY_TIMEOUT_SECONDS)
    except EslError as exc:  # the switch already gave up on it: nothing left to refuse
        log.info("shed call's socket already gone: %s", exc)
    finally:
        conn.close()


class LoopLagProbe(GreenletTask):
    """Samples how late the gevent hub runs a timer; ``lag_ms`` is the mean of the last second:
    a saturated loop is late on every sample, a single slow step (a big parse, a GC pause) on
    one, and only the first is a reason to turn callers away."""

    def __init__(self, interval: float = limits.CONTROLLER_LAG_PROBE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock  # injectable so a test can set the samples' times
        self._window: list[tuple[float, float]] = []

    @property
    def lag_ms(self) -> float:
        cutoff = self._clock() - 1.0
        recent = [lag for at, lag in self._window if at >= cutoff]
        return sum(recent) / len(recent) if recent else 0.0

    def record(self, slept_at: float, woke_at: float) -> None:
        """One sample: a timer set at ``slept_at`` for ``interval`` seconds ran at ``woke_at``."""
        self._window.append((woke_at, max(0.0, (woke_at - slept_at - self.interval) * 1000)))
        if len(self._window) > 50:
            del self._window[:25]

    def _run(self) -> None:
        while True:
            before = self._clock()
            gevent.sleep(self.interval)
            self.record(before, self._clock())


class SetupGate:
    """Decides, per accepted socket, whether this controller takes the call."""

    def __init__(self, in_flight: Callable[[], int], probe: LoopLagProbe, *,
                 max_in_flight: Callable[[], int], max_lag_ms: Callable[[], int],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._in_flight = in_flight
        self._clock = clock  # injectable: the log interval is tested on a clock the test sets
        self.probe = probe
        self._max_in_flight = max_in_flight
        self._max_lag_ms = max_lag_ms
        self.shed = 0
        self._shed_since_log = 0
        self._last_log = 0.0

    def refusal(self) -> Optional[str]:
        """Why the next call must be turned away (None: take it)."""
        in_flight, ceiling = self._in_flight(), self._max_in_flight()
        if in_flight > ceiling:
            return f"{in_flight} setups in flight (limit {ceiling})"
        lag, max_lag = self.probe.lag_ms, self._max_lag_ms()
        if lag > max_lag:
            return f"event loop {lag:.0f} ms late (limit {max_lag} ms)"
        return None

    def turn_away(self, refuse: Callable[[], None], reason: str) -> None:
        """Refuse the call unanswered (503); log at most once per interval with the count, so
        an overload does not also flood the log."""
        refuse()
        log.info("call turned away unanswered (503): %s", reason)
        self.shed += 1
        self._shed_since_log += 1
        now = self._clock()
        if now - self._last_log >= SHED_LOG_INTERVAL_SECONDS:
            log.warning("overloaded: turned away %d call(s) with 503 in the last %.0f s (%s)",
                        self._shed_since_log, now - self._last_log if self._last_log else 0.0,
                        reason)
            self._last_log = now
            self._shed_since_log = 0
