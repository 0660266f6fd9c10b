"""Marshmallow fields shared by the API's input schemas.

``UtcDateTime``: Python parses offsets up to ±23:59 and years 1..9999, PostgreSQL's timestamptz
takes offsets only up to ±15:59 — ``2000-01-01T00:00:00+16:00`` reached the database and came
back as a 500. Every accepted instant is converted to UTC here, so the database only ever sees
+00:00; an instant that has no UTC form inside Python's range (year 1 at +01:00) is a 422.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import marshmallow as ma


def to_utc(value: datetime) -> datetime:
    """``value`` in UTC (naive values are taken as UTC); ValueError when not representable."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except OverflowError as exc:
        raise ValueError(f"{value.isoformat()} has no UTC form") from exc


class UtcDateTime(ma.fields.AwareDateTime):
    """ISO 8601 with an offset (or ``default_timezone``), returned in UTC."""

    default_error_messages = {"out_of_range": "Instant out of range once converted to UTC."}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> datetime:
        parsed = super()._deserialize(value, attr, data, **kwargs)
        try:
            return to_utc(parsed)
        except ValueError as exc:
            raise self.make_error("out_of_range") from exc
