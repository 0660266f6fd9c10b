"""Admission of a new call: read the account's and its service provider's
``max_concurrent_calls`` and ask the limiter.

Why a separate module: the limiter stays a pure Redis concern; this is the one place that knows
where the limits live (platform path: the call is not tenant-authenticated yet).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import select

from app.calls.limiter import Admission, ConcurrencyLimiter
from app.db.engine import platform_session
from app.models import Account, ServiceProvider


@dataclass(frozen=True)
class CallLimits:
    account_limit: int
    service_provider_id: uuid.UUID
    service_provider_limit: int


def limits_for(account_id: uuid.UUID | str) -> CallLimits:
    """Raises LookupError for an unknown account."""
    with platform_session() as session:
        row = session.execute(
            select(Account.max_concurrent_calls, Account.service_provider_id,
                   ServiceProvider.max_concurrent_calls.label("sp_limit"))
            .join(ServiceProvider, ServiceProvider.id == Account.service_provider_id)
            .where(Account.id == account_id)
        ).first()
    if row is None:
        raise LookupError(f"unknown account {account_id}")
    return CallLimits(row.max_concurrent_calls, row.service_provider_id, row.sp_limit)


def admit_call(limiter: ConcurrencyLimiter, call_id: object, account_id: uuid.UUID | str) -> Admission:
    """Acquire a slot for ``call_id`` in both scopes or neither (see ``Admission``)."""
    lim = limits_for(account_id)
    return limiter.acquire(call_id, account_id, lim.account_limit,
                           lim.service_provider_id, lim.service_provider_limit)
