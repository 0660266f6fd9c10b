"""Declarative base, naming convention and the column helpers every model shares.

The naming convention makes constraint names deterministic, so later migrations can drop or
replace a CHECK/unique constraint by name without looking it up in the catalogue.
"""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import ClassVar

from sqlalchemy import DateTime, ForeignKey, MetaData, Table, Uuid, func, text
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    # every model maps one Table (no mapping to a join or a select): say so to the type checker,
    # so Core statements built on ``Model.__table__`` type-check (insert/update take a Table)
    __table__: ClassVar[Table]


def in_list(column: str, values: tuple[str, ...]) -> str:
    """SQL text of a CHECK that ``column`` is one of ``values`` (values are our own constants)."""
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"{column} IN ({quoted})"


def uuid_pk() -> Mapped[uuid.UUID]:
    """UUID primary key generated client-side too, so the ORM never needs RETURNING to learn it
    (roles with INSERT-only grants, e.g. the API on ``event_outbox``, cannot use RETURNING)."""
    return mapped_column(
        Uuid, primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )


def created_at() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), nullable=False, server_default=func.now())


class TenantOwned:
    """Rows that belong to exactly one account. Row-level security filters on ``account_id``."""

    @declared_attr
    def account_id(cls) -> Mapped[uuid.UUID]:  # noqa: N805
        return mapped_column(
            Uuid, ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False, index=True
        )


class MaybePlatformOwned:
    """Rows owned by one account, or by the platform when ``account_id`` is NULL (shared with
    every tenant read-only: platform carriers, their gateways, platform-level LCR plans)."""

    @declared_attr
    def account_id(cls) -> Mapped[uuid.UUID | None]:  # noqa: N805
        return mapped_column(
            Uuid, ForeignKey("accounts.id", ondelete="CASCADE"), nullable=True, index=True
        )

