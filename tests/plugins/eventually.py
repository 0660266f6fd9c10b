"""The one way a test waits: poll a condition until it holds or a deadline passes.

Tests never sleep a fixed time to let something happen; they say what they wait for, and a
failure names it. Sleeps go through ``gevent.sleep`` so the hub keeps serving the controller,
the simulator and the HTTP servers the test runs in-process.
"""
from __future__ import annotations

import time
from typing import Callable, TypeVar

import gevent

T = TypeVar("T")

POLL_SECONDS = 0.05


class NotYet(AssertionError):
    """The condition did not hold before the deadline."""


def eventually(condition: Callable[[], T], *, timeout: float = 10.0, what: str = "",
               interval: float = POLL_SECONDS) -> T:
    """Return ``condition()``'s first truthy value; raise NotYet (an AssertionError naming
    ``what`` and the last value) when none came within ``timeout`` seconds.

    An AssertionError raised by ``condition`` counts as "not yet", so a condition may be a
    block of asserts; the last one is re-raised as the cause at the deadline.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    failure: AssertionError | None = None
    while True:
        try:
            value = condition()
        except AssertionError as exc:
            value, failure = None, exc  # type: ignore[assignment]
        else:
            failure = None
            if value:
                return value
            last = value
        if time.monotonic() >= deadline:
            label = what or getattr(condition, "__name__", "condition")
            raise NotYet(f"{label}: not true within {timeout:g} s (last: {failure or last!r})") from failure
        gevent.sleep(interval)
