"""One long-running greenlet owned by an object: ``start()`` spawns its ``_run``, ``stop()``
kills it. The watchdog, the loop-lag probe and the orphan sweeper share this lifecycle."""
from __future__ import annotations

from typing import Optional, TypeVar

import gevent

T = TypeVar("T", bound="GreenletTask")


class GreenletTask:
    _greenlet: Optional[gevent.Greenlet] = None

    def start(self: T) -> T:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._run)
        return self

    def stop(self) -> None:
        greenlet, self._greenlet = self._greenlet, None
        if greenlet is not None:
            greenlet.kill(block=True, timeout=1.0)

    def _run(self) -> None:  # pragma: no cover - every subclass defines its loop
        raise NotImplementedError
