"""Platform-level tables: runtime configuration, the event outbox, and the compliance log."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Index, Integer, String, Text, Uuid, func, text
from sqlalchemy.dialects.postgresql import INET, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, uuid_pk


def _utcnow() -> datetime:
    from datetime import timezone

    return datetime.now(timezone.utc)


class ClusterConfig(Base):
    """Runtime configuration read at boot (SPEC: no external configuration fetch)."""

    __tablename__ = "cluster_config"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    value: Mapped[Any] = mapped_column(JSONB, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )


class EventOutbox(Base):
    """Store-and-forward for bus events: written in the same transaction as the state change,
    published (with confirms) by the relay, which sets ``published_at``. ``id`` is the event id.
    Defaults are client-side so an INSERT-only role never needs RETURNING."""

    __tablename__ = "event_outbox"

    id: Mapped[uuid.UUID] = uuid_pk()
    exchange: Mapped[str] = mapped_column(String(64), nullable=False)
    routing_key: Mapped[str] = mapped_column(String(255), nullable=False)
    body: Mapped[Any] = mapped_column(JSONB, nullable=False)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, default=_utcnow, server_default=func.now()
    )
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default=text("0"))
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_event_outbox_unpublished", "created_at", postgresql_where=text("published_at IS NULL")),
    )


class ComplianceAccessLog(TenantOwned, Base):
    """Append-only: who exported or viewed protected data, with which filters and row count."""

    __tablename__ = "compliance_access_log"

    id: Mapped[uuid.UUID] = uuid_pk()
    # no foreign key: the log must keep who acted even after the user is deleted
    user_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    action: Mapped[str] = mapped_column(String(64), nullable=False)
    occurred_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, default=_utcnow, server_default=func.now()
    )
    filters: Mapped[dict[str, Any]] = mapped_column(
        JSONB, nullable=False, default=dict, server_default=text("'{}'::jsonb")
    )
    row_count: Mapped[int | None] = mapped_column(Integer)
    remote_addr: Mapped[str | None] = mapped_column(INET)

    __table_args__ = (Index("ix_compliance_access_log_account_time", "account_id", text("occurred_at DESC")),)
