"""Creating a tenant: service provider (a default one if none exists), account, first admin.

Runs on the platform path (``platform_session``): no tenant exists yet, and the account row is
only writable cross-tenant (the API role has SELECT on its own account row and nothing else).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.accounts.passwords import DEFAULT_ROUNDS, MAX_PASSWORD_BYTES, hash_password
from app.db.engine import platform_session
from app.errors import Conflict, ValidationFailed
from app.models import Account, ServiceProvider, User
from app.models.enums import LICENSES, PERMISSIONS
from app.models.tenancy import SUBDOMAIN_PATTERN

DEFAULT_SERVICE_PROVIDER = "default"
MIN_PASSWORD_LENGTH = 8
_SUBDOMAIN = re.compile(SUBDOMAIN_PATTERN)


def normalise_subdomain(subdomain: str) -> str:
    """Lower-case DNS label (host names are case-insensitive) or ValidationFailed."""
    value = (subdomain or "").strip().lower()
    if not _SUBDOMAIN.match(value):
        raise ValidationFailed(
            "subdomain must be a DNS label: 1-63 characters a-z, 0-9 and '-', "
            "not starting or ending with '-'",
            code="invalid_subdomain",
            details={"subdomain": subdomain},
        )
    return value


def parse_licenses(licenses: Iterable[str] | str | None) -> list[str]:
    """Known license names, de-duplicated in catalogue order; unknown names are refused."""
    if licenses is None:
        return []
    items = licenses.split(",") if isinstance(licenses, str) else list(licenses)
    wanted = {item.strip() for item in items if item and item.strip()}
    unknown = sorted(wanted - set(LICENSES))
    if unknown:
        raise ValidationFailed(
            f"unknown license(s): {', '.join(unknown)}; known: {', '.join(LICENSES)}",
            code="invalid_license",
            details={"unknown": unknown, "known": list(LICENSES)},
        )
    return [name for name in LICENSES if name in wanted]


def _check_admin(username: str, password: str) -> str:
    name = (username or "").strip()
    if not name or len(name) > 255:
        raise ValidationFailed("admin user name must be 1-255 characters", code="invalid_username")
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise ValidationFailed(
            f"admin password must be at least {MIN_PASSWORD_LENGTH} characters", code="weak_password"
        )
    if len(password.encode("utf-8")) > MAX_PASSWORD_BYTES:
        raise ValidationFailed(
            f"admin password must be at most {MAX_PASSWORD_BYTES} bytes (bcrypt limit)",
            code="invalid_password",
        )
    return name


def default_service_provider(session: Session) -> ServiceProvider:
    """The oldest service provider, creating ``default`` when there is none (race-safe)."""
    query = select(ServiceProvider).order_by(ServiceProvider.created_at, ServiceProvider.id).limit(1)
    provider = session.scalars(query).first()
    if provider is None:
        session.execute(
            insert(ServiceProvider)
            .values(name=DEFAULT_SERVICE_PROVIDER)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        provider = session.scalars(query).one()
    return provider


def create_tenant(
    subdomain: str,
    admin_user: str,
    admin_password: str,
    licenses: Iterable[str] | str | None = None,
    *,
    name: str | None = None,
    max_concurrent_calls: int = 0,
    bcrypt_rounds: int = DEFAULT_ROUNDS,
) -> Account:
    """Create the account and its admin (role ``admin``, every permission) in one transaction.

    Raises ValidationFailed (bad subdomain, license, user name or password) or Conflict
    (subdomain taken). Returns the detached Account.
    """
    label = normalise_subdomain(subdomain)
    license_names = parse_licenses(licenses)
    username = _check_admin(admin_user, admin_password)
    if max_concurrent_calls < 0:
        raise ValidationFailed("max_concurrent_calls must be 0 (unlimited) or more", code="invalid_limit")
    password_hash = hash_password(admin_password, rounds=bcrypt_rounds)
    try:
        with platform_session() as session:
            if session.scalar(select(Account.id).where(Account.subdomain == label)) is not None:
                raise _taken(label)
            provider = default_service_provider(session)
            account = Account(
                service_provider_id=provider.id,
                name=name or label,
                subdomain=label,
                licenses=license_names,
                max_concurrent_calls=max_concurrent_calls,
            )
            session.add(account)
            session.flush()
            session.add(
                User(
                    account_id=account.id,
                    username=username,
                    password_hash=password_hash,
                    role="admin",
                    permissions=list(PERMISSIONS),
                )
            )
            session.flush()
    except IntegrityError as exc:  # lost a race with a concurrent create of the same subdomain
        if "uq_accounts_subdomain" in str(exc.orig):
            raise _taken(label) from None
        raise
    return account


def _taken(label: str) -> Conflict:
    return Conflict(f"subdomain '{label}' is already taken", code="subdomain_taken", details={"subdomain": label})
