"""Outbound campaign definitions (no dialer: SPEC marks campaigns 'Not yet wired')."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ARRAY,
    CheckConstraint,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    UniqueConstraint,
    Uuid,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, created_at, in_list, uuid_pk
from app.models.enums import CAMPAIGN_STATUSES, CONTACT_STATUSES, DIALER_MODES


class Campaign(TenantOwned, Base):
    __tablename__ = "campaigns"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    dialer_mode: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'preview'"))
    caller_id: Mapped[str | None] = mapped_column(String(32))
    # the trunk: the tenant's own carrier or a platform carrier (checked by trigger)
    carrier_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("carriers.id", ondelete="SET NULL")
    )
    # agent groups are queues; an array cannot carry a foreign key, the API checks ownership
    agent_group_ids: Mapped[list[uuid.UUID]] = mapped_column(
        ARRAY(Uuid), nullable=False, server_default=text("'{}'::uuid[]")
    )
    status: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'draft'"))
    created_at: Mapped[datetime] = created_at()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        UniqueConstraint("id", "account_id", name="uq_campaigns_id_account"),
        CheckConstraint(in_list("dialer_mode", DIALER_MODES), name="dialer_mode_known"),
        CheckConstraint(in_list("status", CAMPAIGN_STATUSES), name="status_known"),
    )


class CampaignContact(TenantOwned, Base):
    __tablename__ = "campaign_contacts"

    id: Mapped[uuid.UUID] = uuid_pk()
    campaign_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    phone_number: Mapped[str] = mapped_column(String(32), nullable=False)
    name: Mapped[str | None] = mapped_column(String(255))
    attributes: Mapped[dict[str, Any]] = mapped_column(
        JSONB, nullable=False, server_default=text("'{}'::jsonb")
    )
    status: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'pending'"))
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    last_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_result: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        ForeignKeyConstraint(
            ["campaign_id", "account_id"],
            ["campaigns.id", "campaigns.account_id"],
            name="fk_campaign_contacts_campaign_same_account",
            ondelete="CASCADE",
        ),
        CheckConstraint(in_list("status", CONTACT_STATUSES), name="status_known"),
        CheckConstraint("attempts >= 0", name="attempts_non_negative"),
        Index("ix_campaign_contacts_campaign_status", "campaign_id", "status"),
    )
