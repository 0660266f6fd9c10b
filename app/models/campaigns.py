"""Outbound campaigns, their contacts and the account's do-not-call list.

The dialing rules these columns carry (state machine, calling window, retries, do-not-call,
pacing) live in ``app/campaigns``; docs/campaigns.md explains them."""
from __future__ import annotations

import uuid
from datetime import datetime, time
from typing import Any

from sqlalchemy import (
    ARRAY,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    Time,
    UniqueConstraint,
    Uuid,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, created_at, in_list, uuid_pk
from app.models.enums import AMD_MODES, AMD_RESULTS, ATTEMPT_OUTCOMES, CAMPAIGN_STATUSES, CONTACT_STATUSES, DIALER_MODES


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
    # when a ``scheduled`` campaign starts running
    scheduled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # calling window in each contact's local time, [start, end), on ISO weekdays (1 = Monday)
    window_start: Mapped[time] = mapped_column(Time, nullable=False, server_default=text("'08:00'"))
    window_end: Mapped[time] = mapped_column(Time, nullable=False, server_default=text("'21:00'"))
    allowed_weekdays: Mapped[list[int]] = mapped_column(
        ARRAY(SmallInteger), nullable=False, server_default=text("'{1,2,3,4,5,6,7}'::smallint[]")
    )
    # per attempt outcome {"busy": {"delay_seconds": .., "max_attempts": ..}, ..}; missing
    # outcomes take app/limits.py's defaults (app/campaigns/retries.py)
    retry_policy: Mapped[dict[str, Any]] = mapped_column(
        JSONB, nullable=False, server_default=text("'{}'::jsonb")
    )
    # power mode: lines per available agent; predictive: the abandon-rate cap in percent
    power_ratio: Mapped[float] = mapped_column(Float, nullable=False, server_default=text("2.0"))
    abandon_cap_percent: Mapped[float] = mapped_column(Float, nullable=False, server_default=text("3.0"))
    # answering-machine detection on answered customers (app/voice/amd.py, AMD_MODES) and, for
    # ``message``, the one say or play verb left on the machine after its beep
    amd: Mapped[str] = mapped_column(String(8), nullable=False, server_default=text("'off'"))
    amd_message: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # power/predictive: what a live answer no agent took in time hears (said, or a recording
    # played); both null → the default text (app/campaigns/safe_harbour.py)
    safe_harbour_text: Mapped[str | None] = mapped_column(String(500))
    safe_harbour_url: Mapped[str | None] = mapped_column(String(2048))
    # attempts per outcome ({"busy": 3, ...}) and preview skips ("skipped"), counted in the
    # transaction that applies each one (app/campaigns/picking.py): the live figures' totals
    outcome_counts: Mapped[dict[str, int]] = mapped_column(
        JSONB, nullable=False, server_default=text("'{}'::jsonb")
    )
    status_changed_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    created_at: Mapped[datetime] = created_at()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        UniqueConstraint("id", "account_id", name="uq_campaigns_id_account"),
        CheckConstraint(in_list("dialer_mode", DIALER_MODES), name="dialer_mode_known"),
        CheckConstraint(in_list("status", CAMPAIGN_STATUSES), name="status_known"),
        CheckConstraint("window_start < window_end", name="window_ordered"),
        CheckConstraint("power_ratio >= 1 AND power_ratio <= 5", name="power_ratio_range"),
        CheckConstraint("abandon_cap_percent > 0 AND abandon_cap_percent <= 100", name="abandon_cap_range"),
        CheckConstraint(in_list("amd", AMD_MODES), name="amd_known"),
        CheckConstraint("amd <> 'message' OR amd_message IS NOT NULL", name="amd_message_given"),
        CheckConstraint("safe_harbour_text IS NULL OR safe_harbour_url IS NULL", name="safe_harbour_one"),
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
    # the IANA zone given on import; None = derived from the number (``time_zones``)
    time_zone: Mapped[str | None] = mapped_column(String(64))
    # the zones the calling window must hold in (one, or every zone of the number's region);
    # empty on rows imported before 0012: derived from the number when they are picked
    time_zones: Mapped[list[str]] = mapped_column(
        ARRAY(String(64)), nullable=False, server_default=text("'{}'::varchar[]")
    )
    # a retry is not dialled before this (None = due now)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    disposition: Mapped[str | None] = mapped_column(String(64))
    disposition_note: Mapped[str | None] = mapped_column(Text)
    disposed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # preview mode: how often agents skipped this contact (app/campaigns/preview.py)
    skips: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    # the last attempt's answering-machine verdict (AMD_RESULTS; None: no detection ran)
    last_amd_result: Mapped[str | None] = mapped_column(String(8))
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
        CheckConstraint("skips >= 0", name="skips_non_negative"),
        CheckConstraint("last_result IS NULL OR " + in_list("last_result", ATTEMPT_OUTCOMES),
                        name="last_result_known"),
        CheckConstraint("last_amd_result IS NULL OR " + in_list("last_amd_result", AMD_RESULTS),
                        name="last_amd_result_known"),
        Index("ix_campaign_contacts_campaign_status", "campaign_id", "status"),
        Index("ix_campaign_contacts_due", "campaign_id", "next_attempt_at",
              postgresql_where=text("status = 'pending'")),
    )


class DoNotCall(TenantOwned, Base):
    """A number the account must never dial from a campaign (checked when the contact is
    picked, so a number listed after the import is still never dialled)."""

    __tablename__ = "do_not_call"

    id: Mapped[uuid.UUID] = uuid_pk()
    number: Mapped[str] = mapped_column(String(32), nullable=False)
    reason: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (UniqueConstraint("account_id", "number", name="uq_do_not_call_account_number"),)
