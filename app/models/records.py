"""What happened: call detail records, per-interaction indicators, agent segments, usage."""
from __future__ import annotations

import uuid
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import INET, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, in_list, uuid_pk
from app.models.enums import AMD_RESULTS, CALL_DIRECTIONS, CALL_STATUSES


def _flag() -> Mapped[bool]:
    return mapped_column(Boolean, nullable=False, server_default=text("false"), default=False)


class CallRecord(TenantOwned, Base):
    """One row per call leg handled. ``public_id`` is what the API and review URLs expose; the
    bigint ``id`` is internal (ordering, keyset pagination). References to other rows are
    kept without foreign keys so a deleted queue or agent never rewrites history."""

    __tablename__ = "call_records"

    id: Mapped[int] = mapped_column(BigInteger, Identity(always=False), primary_key=True)
    public_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, nullable=False, unique=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    # legs
    trace_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False, index=True)
    call_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    other_leg_call_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    direction: Mapped[str] = mapped_column(String(8), nullable=False)
    from_number: Mapped[str | None] = mapped_column(String(64))
    to_number: Mapped[str | None] = mapped_column(String(64))
    sip_call_id: Mapped[str | None] = mapped_column(String(255))
    # account and carrier
    application_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    carrier_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    gateway_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    # the carrier and gateway that answered this leg's last dial to a phone number (LCR)
    dial_carrier_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    dial_gateway_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    source_ip: Mapped[str | None] = mapped_column(INET)
    # timestamps and durations
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    answered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    ring_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    talk_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    duration_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    # outcome
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    hangup_cause: Mapped[str | None] = mapped_column(String(64))
    hangup_cause_q850: Mapped[int | None] = mapped_column(Integer)
    hangup_disposition: Mapped[str | None] = mapped_column(String(64))
    hangup_reason: Mapped[str | None] = mapped_column(Text)  # from the hangup verb
    # sentiment (written here, never on the bus)
    sentiment_score: Mapped[Decimal | None] = mapped_column(Numeric(5, 4))
    sentiment_label: Mapped[str | None] = mapped_column(String(32))
    # contact centre
    agent_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    queue_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    # outbound campaigns: the campaign and contact a campaign call dialled (stamped by the
    # dialer when it applies the call's outcome, app/campaigns/dialer.py)
    campaign_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    contact_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    # its answering-machine verdict (AMD_RESULTS; None: no detection ran), stamped with them
    amd_result: Mapped[str | None] = mapped_column(String(8))
    # feature-presence flags
    has_recording: Mapped[bool] = _flag()
    has_transcript: Mapped[bool] = _flag()
    has_webhook: Mapped[bool] = _flag()
    has_flow: Mapped[bool] = _flag()
    recording_url: Mapped[str | None] = mapped_column(Text)
    webhook_error: Mapped[str | None] = mapped_column(Text)
    tags: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, server_default=text("'{}'::jsonb"))
    # human-readable path of the call, e.g. "ivr > queue:sales > agent:alice"
    journey: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )

    __table_args__ = (
        CheckConstraint(in_list("direction", CALL_DIRECTIONS), name="direction_known"),
        CheckConstraint(in_list("status", CALL_STATUSES), name="status_known"),
        CheckConstraint("ring_ms >= 0 AND talk_ms >= 0 AND duration_ms >= 0", name="durations_non_negative"),
        CheckConstraint("sentiment_score IS NULL OR sentiment_score BETWEEN -1 AND 1", name="sentiment_range"),
        CheckConstraint("amd_result IS NULL OR " + in_list("amd_result", AMD_RESULTS), name="amd_result_known"),
        # a leg is recorded once: the hangup writer can upsert on it
        UniqueConstraint("call_id"),
        Index("ix_call_records_account_started", "account_id", text("started_at DESC")),
        Index("ix_call_records_account_direction", "account_id", "direction", text("started_at DESC")),
        Index("ix_call_records_account_status", "account_id", "status", text("started_at DESC")),
        Index("ix_call_records_account_agent", "account_id", "agent_id", text("started_at DESC")),
        Index("ix_call_records_account_queue", "account_id", "queue_id", text("started_at DESC")),
        Index("ix_call_records_account_campaign", "account_id", "campaign_id", text("started_at DESC"),
              postgresql_where=text("campaign_id IS NOT NULL")),
    )


class InteractionSummary(TenantOwned, Base):
    """Derived indicators for one conversation (``trace_id``), merged into the CSV export."""

    __tablename__ = "interaction_summary"

    id: Mapped[uuid.UUID] = uuid_pk()
    trace_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False, unique=True)
    ivr_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    queue_wait_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    connect_latency_ms: Mapped[int | None] = mapped_column(Integer)
    talk_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    hold_count: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    hold_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    acw_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    aht_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    transfer_count: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    abandoned: Mapped[bool] = _flag()
    short_abandon: Mapped[bool] = _flag()
    disposition: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )


class InteractionSegment(TenantOwned, Base):
    """One agent's ownership window inside a conversation."""

    __tablename__ = "interaction_segment"

    id: Mapped[uuid.UUID] = uuid_pk()
    trace_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False, index=True)
    call_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)  # the caller's leg
    agent_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    talk_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    hold_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    acw_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    handle_ms: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"), default=0)
    transferred: Mapped[bool] = _flag()
    conferenced: Mapped[bool] = _flag()


class UsageMeter(TenantOwned, Base):
    """Monthly per-account, per-product roll-up for license enforcement (not per call)."""

    __tablename__ = "usage_meters"

    id: Mapped[uuid.UUID] = uuid_pk()
    service_provider_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("service_providers.id", ondelete="CASCADE"), nullable=False, index=True
    )
    product: Mapped[str] = mapped_column(String(64), nullable=False)
    period: Mapped[date] = mapped_column(Date, nullable=False)  # first day of the month
    quantity: Mapped[int] = mapped_column(BigInteger, nullable=False, server_default=text("0"), default=0)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        UniqueConstraint("account_id", "product", "period"),
        CheckConstraint("period = date_trunc('month', period)::date", name="period_is_month_start"),
        CheckConstraint("quantity >= 0", name="quantity_non_negative"),
    )
