"""Least-cost routing: plan → routes (regex prefix, priority) → carrier set entries."""
from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app import limits
from app.models.base import Base, MaybePlatformOwned, created_at, uuid_pk


class Lcr(MaybePlatformOwned, Base):
    """A named plan; ``account_id`` NULL = platform-level (optionally for one service provider)."""

    __tablename__ = "lcr"

    id: Mapped[uuid.UUID] = uuid_pk()
    service_provider_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("service_providers.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    is_active: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    # plans are tried in this order (lower first) when several apply; then created_at
    priority: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    created_at: Mapped[datetime] = created_at()

    routes: Mapped[list["LcrRoute"]] = relationship(
        primaryjoin="Lcr.id == foreign(LcrRoute.lcr_id)",
        order_by="LcrRoute.priority",
        viewonly=True,
    )

    __table_args__ = (UniqueConstraint("id", "account_id", name="uq_lcr_id_account"),)


class LcrRoute(MaybePlatformOwned, Base):
    __tablename__ = "lcr_routes"

    id: Mapped[uuid.UUID] = uuid_pk()
    lcr_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("lcr.id", ondelete="CASCADE"), nullable=False, index=True
    )
    regex: Mapped[str] = mapped_column(Text, nullable=False)
    priority: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    description: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at()

    entries: Mapped[list["LcrCarrierSetEntry"]] = relationship(
        primaryjoin="LcrRoute.id == foreign(LcrCarrierSetEntry.lcr_route_id)",
        order_by="(LcrCarrierSetEntry.priority, LcrCarrierSetEntry.workload.desc())",
        viewonly=True,
    )

    __table_args__ = (
        UniqueConstraint("id", "account_id", name="uq_lcr_routes_id_account"),
        ForeignKeyConstraint(
            ["lcr_id", "account_id"],
            ["lcr.id", "lcr.account_id"],
            name="fk_lcr_routes_lcr_same_account",
            ondelete="CASCADE",
        ),
        CheckConstraint(f"char_length(regex) BETWEEN 1 AND {limits.ROUTE_REGEX_MAX_LENGTH}", name="regex_length"),
    )


class LcrCarrierSetEntry(MaybePlatformOwned, Base):
    """Carriers of a route: tried priority ascending, then workload descending, with failover.
    The carrier may be the tenant's own or a platform carrier (so no same-account FK here)."""

    __tablename__ = "lcr_carrier_set_entries"

    id: Mapped[uuid.UUID] = uuid_pk()
    lcr_route_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("lcr_routes.id", ondelete="CASCADE"), nullable=False, index=True
    )
    carrier_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("carriers.id", ondelete="CASCADE"), nullable=False, index=True
    )
    priority: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    workload: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("100"))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        ForeignKeyConstraint(
            ["lcr_route_id", "account_id"],
            ["lcr_routes.id", "lcr_routes.account_id"],
            name="fk_lcr_entries_route_same_account",
            ondelete="CASCADE",
        ),
        UniqueConstraint("lcr_route_id", "carrier_id"),
        CheckConstraint("workload >= 0", name="workload_non_negative"),
    )
