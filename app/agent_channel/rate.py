"""The per-socket command budget of the agent channel: a token bucket.

Why a bucket and not a fixed window: it lets a short burst through (an SDK replaying its state
after a reconnect, an agent tapping the keypad) yet holds a flood to the refill rate, with no
window edge where twice the limit passes. Why per socket and in memory: a socket lives in one
greenlet of one API process, and a second socket of the same agent takes the first over, so
one agent cannot open several buckets at once. The clock is injected (tests freeze it).
"""
from __future__ import annotations

import time
from typing import Callable

Clock = Callable[[], float]


class TokenBucket:
    """``burst`` tokens, refilled at ``rate`` per second of ``clock``; ``take`` spends one."""

    def __init__(self, rate: float, burst: int, *, clock: Clock = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs a positive rate and a burst of at least 1")
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.tokens = float(burst)
        self.updated = clock()

    def take(self) -> bool:
        """Spend one token: True when there was one, False (nothing spent) otherwise."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
