"""One outage of a dependency, logged once when it starts and once when it ends.

Why: a dependency that is down fails every operation that touches it — at ten calls a second
that was an ERROR line (with its traceback) per call, burying the one fact an operator needs:
*it is down since when, and when did it come back*. The first failure logs the outage, later
failures are only counted, and the first success logs its duration and what failed meanwhile.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Optional


class Outage:
    def __init__(self, what: str, log: logging.Logger, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self._log = log
        self._clock = clock
        self.since: Optional[float] = None
        self.failures = 0
        self.last_duration: Optional[float] = None

    @property
    def down(self) -> bool:
        return self.since is not None

    def failed(self, error: BaseException, consequence: str) -> bool:
        """Count one failed operation; True (and one ERROR line) only for the first of an outage.
        ``consequence`` says what the product does meanwhile."""
        self.failures += 1
        if self.since is not None:
            return False
        self.since = self._clock()
        self._log.error("%s unavailable (%s): %s until it is back", self.what,
                        str(error).split("\n", 1)[0], consequence)
        return True

    def recovered(self, summary: str = "") -> Optional[float]:
        """End the outage (if any): log its duration once and return it."""
        if self.since is None:
            return None
        duration = self._clock() - self.since
        self._log.warning("%s available again after %.1fs (%d operation(s) failed meanwhile)%s",
                          self.what, duration, self.failures, f"; {summary}" if summary else "")
        self.since = None
        self.failures = 0
        self.last_duration = duration
        return duration
