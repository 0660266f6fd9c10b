"""The handle-time samples one queue call gives its queue's EWT (app/contact/queue_stats.py):
one per agent leg that had the caller, never two for the same leg.

Why a small object per call and not a sample at each place the call can end: a caller who is
transferred or put in a three-way call changes agent once or more while the queue verb runs,
and the verb ends (normally, or by the caller hanging up) in several places. Before, the
first agent's sample was written at a completed transfer and again when the caller then hung
up, while the agent who took the caller gave none. Here the agent leg that has the caller is
the *owner*; handing the caller over closes the owner's sample (answer or hand-over → now) and
opens the next one; the end of the call closes the last. A leg closed once is never sampled
again. The guard lives in the session's memory: one queue verb drives one call on one
controller.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Optional

from app.contact.queue_stats import QueueStats

log = logging.getLogger(__name__)


class HandleSamples:
    def __init__(self, stats: QueueStats, account_id: str, queue: str, call_id: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stats, self.account_id, self.queue, self.call_id = stats, account_id, queue, call_id
        self.clock = clock
        self.owner: Optional[tuple[str, float]] = None  # (agent leg, since: monotonic seconds)
        self.sampled: list[tuple[str, int]] = []        # (leg, handle ms) written, in order

    def start(self, leg: str, at: Optional[float] = None) -> None:
        """The agent on ``leg`` has the caller from ``at`` (now by default)."""
        if leg not in {done for done, _ms in self.sampled}:
            self.owner = (leg, self.clock() if at is None else at)

    def end(self) -> Optional[int]:
        """The owner no longer has the caller: its sample (ms), written once; None when no
        agent leg has the caller (a number or ``sip:`` target took it) or it was written."""
        owner, self.owner = self.owner, None
        if owner is None:
            return None
        leg, since = owner
        handle_ms = max(0, int((self.clock() - since) * 1000))
        self.sampled.append((leg, handle_ms))
        try:
            self.stats.handled(self.account_id, self.queue, self.call_id, handle_ms, leg=leg)
        except Exception:  # Redis away: one sample less, the call is not affected
            log.warning("queue %s: handle time not recorded", self.queue, exc_info=True)
        return handle_ms

    def hand_over(self, leg: Optional[str]) -> None:
        """The caller goes from the owner to the agent on ``leg`` (None: to no agent)."""
        self.end()
        if leg is not None:
            self.start(leg)
