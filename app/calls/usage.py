"""Monthly usage roll-up (``usage_meters``) for license enforcement — never per call.

Products metered from call records:
- ``voice.calls``   : +1 per recorded leg
- ``voice.minutes`` : + started minutes of talk (ceil(talk_ms / 60000)); unanswered legs add 0
The row for (account, product, month) is upserted with an additive ON CONFLICT, so concurrent
controllers never lose an increment.
"""
from __future__ import annotations

import math
import uuid
from datetime import date, datetime

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from app.models import UsageMeter

# Built once and executed with parameters (building it per call was most of a meter's CPU).
# A finished leg's meters are the same additive upsert, in the call record's script
# (app/calls/record_sql.py).
_METERS = UsageMeter.__table__
_ADD = pg_insert(_METERS)
_ADD = _ADD.on_conflict_do_update(
    index_elements=[_METERS.c.account_id, _METERS.c.product, _METERS.c.period],
    set_={"quantity": _METERS.c.quantity + _ADD.excluded.quantity, "updated_at": func.now()},
)

PRODUCT_CALLS = "voice.calls"
PRODUCT_MINUTES = "voice.minutes"


def month_start(moment: datetime | date) -> date:
    return date(moment.year, moment.month, 1)


def billable_minutes(talk_ms: int) -> int:
    return math.ceil(talk_ms / 60_000) if talk_ms > 0 else 0


def add_usage(
    session: Session,
    account_id: uuid.UUID,
    service_provider_id: uuid.UUID,
    product: str,
    quantity: int,
    moment: datetime | date,
) -> None:
    """Add ``quantity`` to the account's meter for the month of ``moment`` (UTC)."""
    if quantity < 0:
        raise ValueError("usage only grows")
    session.connection().execute(_ADD, [_meter_row(account_id, service_provider_id, product,
                                                   quantity, moment)])


def _meter_row(account_id: uuid.UUID, service_provider_id: uuid.UUID, product: str,
               quantity: int, moment: datetime | date) -> dict:
    return {"id": uuid.uuid4(), "account_id": account_id,
            "service_provider_id": service_provider_id, "product": product,
            "period": month_start(moment), "quantity": quantity}
