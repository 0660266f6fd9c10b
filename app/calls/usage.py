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
    stmt = pg_insert(UsageMeter).values(
        id=uuid.uuid4(), account_id=account_id, service_provider_id=service_provider_id,
        product=product, period=month_start(moment), quantity=quantity,
    )
    session.execute(stmt.on_conflict_do_update(
        index_elements=[UsageMeter.account_id, UsageMeter.product, UsageMeter.period],
        set_={"quantity": UsageMeter.quantity + stmt.excluded.quantity, "updated_at": func.now()},
    ))


def meter_call(session: Session, account_id: uuid.UUID, service_provider_id: uuid.UUID,
               talk_ms: int, ended_at: datetime) -> None:
    add_usage(session, account_id, service_provider_id, PRODUCT_CALLS, 1, ended_at)
    minutes = billable_minutes(talk_ms)
    if minutes:
        add_usage(session, account_id, service_provider_id, PRODUCT_MINUTES, minutes, ended_at)
