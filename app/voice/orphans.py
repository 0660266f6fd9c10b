"""Channels waiting in the ``socket`` application that no controller serves are hung up.

Under overload (measured on the real switch: 284 channels after a 100 calls/s burst) or after
a controller bug, a channel can sit in ``socket`` with its socket open and nobody on the other
end: accepted by the kernel's backlog, never by a session. FreeSWITCH has no timeout for that,
so the caller would ring until the carrier gave up — or, once answered, for ever. Every few
seconds each controller asks its switches for their channels and hangs up those that are
still in ``socket`` after a grace period, have no session in this controller, and hold no
limiter slot (another controller sharing the switch admitted it). Unanswered ones get 503
(NORMAL_CIRCUIT_CONGESTION), so the carrier fails over.

The dialplan's setup guard (dialplan/public.xml) covers the case this cannot: a controller
that is frozen or dead with its listen socket still open.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Collection, Iterable

import gevent

from app import limits
from esl.errors import EslError
from esl.greenlet_task import GreenletTask

log = logging.getLogger(__name__)

ORPHAN_CAUSE = "NORMAL_CIRCUIT_CONGESTION"  # SIP 503 on an unanswered leg
SOCKET_APPLICATION = "socket"


def orphan_candidates(rows: Iterable[dict], known: Collection[str], *, now: float,
                      grace: float) -> list[str]:
    """Uuids of ``show channels`` rows in the socket app, older than ``grace`` seconds,
    without a session here (``known``)."""
    found = []
    for row in rows:
        uuid = row.get("uuid") or ""
        if row.get("application") != SOCKET_APPLICATION or not uuid or uuid in known:
            continue
        try:
            created = float(row.get("created_epoch") or now)
        except ValueError:
            created = now
        if now - created >= grace:
            found.append(uuid)
    return found


class OrphanSweeper(GreenletTask):
    """One per switch; ``sweep()`` once, or ``start()`` to sweep every ``interval`` seconds."""

    def __init__(self, node, known: Callable[[], Collection[str]],
                 holding: Callable[[list[str]], set[str]], *,
                 interval: float = limits.ORPHAN_SWEEP_SECONDS,
                 grace: float = limits.ORPHAN_GRACE_SECONDS) -> None:
        self.node = node
        self.known = known
        self.holding = holding
        self.interval = interval
        self.grace = grace
        self.hung_up = 0

    def sweep(self) -> list[str]:
        if not self.node.connected:
            return []
        rows = self.node.show_channels(timeout=10)
        candidates = orphan_candidates(rows, self.known(), now=time.time(), grace=self.grace)
        if candidates:
            held = self.holding(candidates)
            candidates = [uuid for uuid in candidates if uuid not in held]
        for uuid in candidates:
            reply = self.node.api(f"uuid_kill {uuid} {ORPHAN_CAUSE}", timeout=10)
            self.hung_up += 1
            log.warning("channel %s waited in the socket application over %ss with no "
                        "session: hung up (%s)", uuid, self.grace, reply.strip())
        return candidates

    def _run(self) -> None:
        while True:
            gevent.sleep(self.interval)
            try:
                self.sweep()
            except EslError as exc:  # link down: the reconnect reconciles; sweep again later
                log.info("orphan sweep of %s skipped: %s", self.node, exc)
            except Exception:
                log.exception("orphan sweep failed")
