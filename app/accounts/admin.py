"""Operator administration of tenants after ``tenant create``: list, show, update (licenses,
name, concurrency limit), disable and enable.

Runs on the platform path: account rows are the operator's (the API role may only read its own,
and lower its own limit through ``lower_own_account_limit``, see app/api/account). A changed
limit takes effect at the next call: the limit is read with the number lookup of every call
(app/calls/route.py), never cached. Live calls are not cut when a limit is lowered or a tenant
disabled; new calls are refused.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Optional

from sqlalchemy import func, select

from app.accounts.service import normalise_subdomain, parse_licenses
from app.db.engine import platform_session
from app.errors import Forbidden, NotFound, ValidationFailed
from app.models import Account, PhoneNumber, ServiceProvider, User


@dataclass(frozen=True)
class TenantView:
    """What an operator sees of a tenant."""

    id: uuid.UUID
    subdomain: str
    name: str
    service_provider: str
    licenses: tuple[str, ...]
    max_concurrent_calls: int
    disabled_at: Optional[datetime]
    created_at: datetime
    users: int
    phone_numbers: int

    @property
    def state(self) -> str:
        return "disabled" if self.disabled_at else "active"


def _views(where=None) -> list[TenantView]:
    users = select(func.count()).where(User.account_id == Account.id).correlate(Account).scalar_subquery()
    numbers = (select(func.count()).where(PhoneNumber.account_id == Account.id)
               .correlate(Account).scalar_subquery())
    query = (select(Account, ServiceProvider.name.label("provider"), users.label("users"),
                    numbers.label("numbers"))
             .join(ServiceProvider, ServiceProvider.id == Account.service_provider_id)
             .order_by(Account.subdomain))
    if where is not None:
        query = query.where(where)
    with platform_session() as session:
        rows = session.execute(query).all()
    return [TenantView(id=r.Account.id, subdomain=r.Account.subdomain, name=r.Account.name,
                       service_provider=r.provider, licenses=tuple(r.Account.licenses or ()),
                       max_concurrent_calls=r.Account.max_concurrent_calls,
                       disabled_at=r.Account.disabled_at, created_at=r.Account.created_at,
                       users=r.users, phone_numbers=r.numbers) for r in rows]


def ensure_enabled(account: Account) -> None:
    """403 ``account_disabled`` for a tenant the operator disabled (login, every API request)."""
    if account.disabled_at is not None:
        raise Forbidden("This tenant is disabled; contact your provider.", code="account_disabled")


def list_tenants() -> list[TenantView]:
    return _views()


def show_tenant(subdomain: str) -> TenantView:
    label = normalise_subdomain(subdomain)
    found = _views(Account.subdomain == label)
    if not found:
        raise NotFound(f"no tenant '{label}'", code="tenant_not_found", details={"subdomain": label})
    return found[0]


def update_tenant(subdomain: str, *, licenses: Iterable[str] | str | None = None,
                  name: str | None = None, max_concurrent_calls: int | None = None) -> TenantView:
    """Change what is given (None = unchanged). ``licenses`` replaces the whole set."""
    label = normalise_subdomain(subdomain)
    if max_concurrent_calls is not None and max_concurrent_calls < 0:
        raise ValidationFailed("max_concurrent_calls must be 0 (unlimited) or more", code="invalid_limit")
    if name is not None and not (0 < len(name.strip()) <= 255):
        raise ValidationFailed("name must be 1-255 characters", code="invalid_name")
    license_names = parse_licenses(licenses) if licenses is not None else None
    with platform_session() as session:
        account = session.scalars(select(Account).where(Account.subdomain == label).with_for_update()).one_or_none()
        if account is None:
            raise NotFound(f"no tenant '{label}'", code="tenant_not_found", details={"subdomain": label})
        if license_names is not None:
            account.licenses = license_names
        if name is not None:
            account.name = name.strip()
        if max_concurrent_calls is not None:
            account.max_concurrent_calls = max_concurrent_calls
    return show_tenant(label)


def set_disabled(subdomain: str, disabled: bool) -> TenantView:
    """Disable (no login, no API, numbers answer 404) or enable a tenant again. Idempotent:
    disabling a disabled tenant keeps the first time."""
    label = normalise_subdomain(subdomain)
    with platform_session() as session:
        account = session.scalars(select(Account).where(Account.subdomain == label).with_for_update()).one_or_none()
        if account is None:
            raise NotFound(f"no tenant '{label}'", code="tenant_not_found", details={"subdomain": label})
        if disabled and account.disabled_at is None:
            account.disabled_at = datetime.now(timezone.utc)
        elif not disabled:
            account.disabled_at = None
    return show_tenant(label)
