"""Monthly usage roll-up (``usage_meters``) for license enforcement — never per call.

Products metered from call records:
- ``voice.calls``   : +1 per recorded leg
- ``voice.minutes`` : + started minutes of talk (ceil(talk_ms / 60000)); unanswered legs add 0
The row for (account, product, month) is upserted with an additive ON CONFLICT, so concurrent
controllers never lose an increment. That upsert is the last statement of the call record's
script (app/calls/record_sql.py ``_ADD_USAGE``): the meters commit with the record or not at all.
"""
from __future__ import annotations

import math
from datetime import date, datetime

PRODUCT_CALLS = "voice.calls"
PRODUCT_MINUTES = "voice.minutes"


def month_start(moment: datetime | date) -> date:
    return date(moment.year, moment.month, 1)


def billable_minutes(talk_ms: int) -> int:
    return math.ceil(talk_ms / 60_000) if talk_ms > 0 else 0
