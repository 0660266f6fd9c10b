"""Number → route lookups that ride out a short PostgreSQL outage.

Why: the number lookup is the one database read every inbound call needs before anything else;
with PostgreSQL away for 10 s every call was refused (with a traceback each). The database stays
the source of truth — each lookup asks it first, so a number moved or removed is seen by the
very next call — and every answer is remembered. When the database does not answer (refused,
dropped, or silent for ``LOOKUP_TIMEOUT_SECONDS``), the lookup is served from what was
remembered, and for ``RETRY_AFTER_SECONDS`` the following calls go straight to the snapshot
instead of each waiting on a database that is away.

Keeping it fresh without change events for numbers (they have none: only routing has
``routing.config.changed``): every successful lookup refreshes its number; at start the numbers
that received calls in the last day are looked up in the background, and every
``REVALIDATE_SECONDS`` each remembered number is looked up again (a removed one is forgotten).
A number that was never looked up cannot be routed during an outage: ``RouteUnavailable``,
which the session turns into a clean refusal (SIP 503, ``call.failed`` ``database_unavailable``).
Routes carry the application's decrypted signing secret, as each call's route always did; the
snapshot keeps at most ``MAX_NUMBERS`` of them (least recently used dropped first).
"""
from __future__ import annotations

import logging
import time
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Optional

import gevent
from sqlalchemy import select

from app.calls.outage import Outage
from app.calls.route import CallRoute, find_inbound_route
from app.db.availability import database_unavailable
from app.db.engine import platform_session
from app.models import CallRecord

log = logging.getLogger(__name__)

LOOKUP_TIMEOUT_SECONDS = 2.0   # a partitioned database must not hold the caller longer
RETRY_AFTER_SECONDS = 1.0      # after a failure, calls skip the database this long
MAX_NUMBERS = 200_000
REVALIDATE_SECONDS = 300
WARM_LOOKBACK_SECONDS = 24 * 3600
WARM_PAUSE_EVERY = 50          # lookups between yields of the background refresh

Lookup = Callable[[str], Optional[CallRoute]]


class RouteUnavailable(Exception):
    """The database did not answer and the snapshot does not know this number."""

    def __init__(self, number: str) -> None:
        super().__init__(f"number {number}: database unavailable and not in the snapshot")
        self.number = number


class _LookupTimedOut(Exception):
    """The database did not answer the number lookup in time: serve it from the snapshot."""


class RouteSnapshot:
    def __init__(self, lookup: Lookup = find_inbound_route, *,
                 timeout: float = LOOKUP_TIMEOUT_SECONDS, retry_after: float = RETRY_AFTER_SECONDS,
                 max_numbers: int = MAX_NUMBERS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._lookup = lookup
        self.timeout = timeout
        self.retry_after = retry_after
        self.max_numbers = max_numbers
        self._clock = clock
        self._routes: OrderedDict[str, CallRoute] = OrderedDict()
        self._skip_database_until = 0.0
        self.outage = Outage("number lookup (PostgreSQL)", log)
        self.served_from_snapshot = 0

    def __len__(self) -> int:
        return len(self._routes)

    def find(self, number: str) -> Optional[CallRoute]:
        """The route of ``number`` (None: no account owns it). Raises RouteUnavailable when
        the database is away and the number is not remembered."""
        if self._clock() >= self._skip_database_until:
            try:
                route = self._ask_database(number)
            except Exception as exc:
                if not isinstance(exc, _LookupTimedOut) and not database_unavailable(exc):
                    raise
                self.outage.failed(exc, "routing calls from the number snapshot")
                self._skip_database_until = self._clock() + self.retry_after
            else:
                if self.outage.down:
                    self.outage.recovered(f"{self.served_from_snapshot} call(s) routed from "
                                          f"the snapshot meanwhile")
                    self.served_from_snapshot = 0
                return route
        else:
            self.outage.failures += 1
        route = self._routes.get(number)
        if route is None:
            raise RouteUnavailable(number)
        self._routes.move_to_end(number)
        self.served_from_snapshot += 1
        return route

    def refresh(self, numbers: Iterable[str]) -> int:
        """Look these numbers up again (background: yields between lookups); returns how many
        answered. Stops at the first database failure."""
        done = 0
        for i, number in enumerate(list(numbers)):
            if i and i % WARM_PAUSE_EVERY == 0:
                gevent.sleep(0)
            try:
                self._ask_database(number)
            except Exception as exc:
                if isinstance(exc, _LookupTimedOut) or database_unavailable(exc):
                    return done
                log.exception("number snapshot: refreshing %s failed", number)
                continue
            done += 1
        return done

    def remembered(self) -> list[str]:
        return list(self._routes)

    def _ask_database(self, number: str) -> Optional[CallRoute]:
        with gevent.Timeout(self.timeout, _LookupTimedOut(f"no answer within {self.timeout}s")):
            route = self._lookup(number)
        if route is None:
            self._routes.pop(number, None)
            return None
        self._routes[number] = route
        self._routes.move_to_end(number)
        while len(self._routes) > self.max_numbers:
            self._routes.popitem(last=False)
        return route


def recently_called_numbers(lookback_seconds: float = WARM_LOOKBACK_SECONDS,
                            limit: int = MAX_NUMBERS) -> list[str]:
    """Numbers that received inbound calls lately: the ones worth knowing during an outage."""
    since = datetime.now(timezone.utc) - timedelta(seconds=lookback_seconds)
    with platform_session() as session:
        return list(session.scalars(
            select(CallRecord.to_number).distinct()
            .where(CallRecord.direction == "inbound", CallRecord.started_at >= since,
                   CallRecord.to_number.is_not(None))
            .limit(limit)))


def start_snapshot_refresher(snapshot: RouteSnapshot, *,
                             interval_seconds: float = REVALIDATE_SECONDS) -> gevent.Greenlet:
    """Warm the snapshot with the recently called numbers, then look every remembered number
    up again each ``interval_seconds``. Kill the greenlet to stop it."""

    def loop() -> None:
        first = True
        while True:
            try:
                numbers = recently_called_numbers() if first else snapshot.remembered()
                answered = snapshot.refresh(numbers)
                if first:
                    log.info("number snapshot warmed: %d of %d recently called numbers",
                             answered, len(numbers))
                first = False
            except Exception as exc:
                if not database_unavailable(exc):
                    log.exception("number snapshot refresh failed")
            gevent.sleep(interval_seconds if not first else 5.0)

    return gevent.spawn(loop)
