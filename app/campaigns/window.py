"""The calling window: may a contact be called at ``now``, in every one of its time zones?

Pure (the clock is a parameter). The window is [start, end) in the contact's local wall-clock
time on the campaign's allowed ISO weekdays (1 = Monday), judged by the local date in that zone.
A contact with several candidate zones (a number whose prefix spans zones, see
app/campaigns/numbers.py) is callable only when the window holds in all of them.
"""
from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import datetime, time, timedelta


@dataclass(frozen=True)
class CallingWindow:
    start: time
    end: time
    weekdays: frozenset[int]

    def allows(self, now: datetime, zones: tuple[str, ...]) -> bool:
        """True when ``now`` (aware) is inside the window in every zone of ``zones``."""
        if not zones:
            return False
        for name in zones:
            local = now.astimezone(zoneinfo.ZoneInfo(name))
            if local.isoweekday() not in self.weekdays or not self.start <= local.time() < self.end:
                return False
        return True

    def next_opening(self, now: datetime, zones: tuple[str, ...], *, horizon_days: int = 8) -> datetime | None:
        """The earliest instant ≥ ``now``, on a quarter hour, when the window allows the contact
        (None if not within ``horizon_days``): when the dialer looks at this contact again."""
        step = timedelta(minutes=15)
        candidate = now.replace(second=0, microsecond=0)
        candidate += timedelta(minutes=-(candidate.minute % 15))
        if candidate < now:
            candidate += step
        if self.allows(now, zones):
            return now
        end = now + timedelta(days=horizon_days)
        while candidate <= end:
            if self.allows(candidate, zones):
                return candidate
            candidate += step
        return None
