"""Service providers and their accounts (tenants). A tenant is reached by its subdomain."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Optional

from sqlalchemy import (
    ARRAY,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, created_at, uuid_pk

# A DNS label: what a tenant types in front of the base domain.
SUBDOMAIN_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"


class ServiceProvider(Base):
    """Groups accounts for billing and for the provider-wide concurrency limit."""

    __tablename__ = "service_providers"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(255), nullable=False, unique=True)
    # 0 = unlimited (SPEC Limits: maxConcurrentCalls)
    max_concurrent_calls: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (CheckConstraint("max_concurrent_calls >= 0", name="max_calls_non_negative"),)


class Account(Base):
    """A tenant. Licenses gate add-ons (api-access, queue-mgmt, programmable-voice)."""

    __tablename__ = "accounts"

    id: Mapped[uuid.UUID] = uuid_pk()
    service_provider_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("service_providers.id", ondelete="RESTRICT"), nullable=False, index=True
    )
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    subdomain: Mapped[str] = mapped_column(String(63), nullable=False)
    licenses: Mapped[list[str]] = mapped_column(
        ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")
    )
    max_concurrent_calls: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    # set by `sbc tenant disable`: no login, no API, numbers answer 404 (migration 0003)
    disabled_at: Mapped[Optional[datetime]] = mapped_column(DateTime(timezone=True), nullable=True)
    # every user must sign in with a TOTP second factor (set by a tenant admin through the
    # definer function ``set_own_account_mfa_required``, migration 0010)
    mfa_required: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("false"))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        UniqueConstraint("subdomain"),
        CheckConstraint(f"subdomain ~ '{SUBDOMAIN_PATTERN}'", name="subdomain_dns_label"),
        CheckConstraint(
            "licenses <@ ARRAY['api-access', 'queue-mgmt', 'programmable-voice']::text[]",
            name="licenses_known",
        ),
        CheckConstraint("max_concurrent_calls >= 0", name="max_calls_non_negative"),
    )
