"""Queues, agents, their memberships and queue callbacks."""
from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    func,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, created_at, in_list, uuid_pk
from app.models.enums import AGENT_STATES, CALLBACK_STATUSES, QUEUE_STRATEGIES


class Queue(TenantOwned, Base):
    __tablename__ = "queues"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    moh: Mapped[str] = mapped_column(String(255), nullable=False, server_default=text("'default'"))
    max_wait_seconds: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("300"))
    announce_position: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    announce_interval_seconds: Mapped[int] = mapped_column(
        Integer, nullable=False, server_default=text("30")
    )
    timeout_hook_url: Mapped[str | None] = mapped_column(Text)
    # delivery to agents (docs/agents.md): ring an agent this long, make an agent not_ready
    # after this many offers missed in a row, after-call work before the agent is offered again
    offer_timeout_seconds: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("20"))
    max_missed_offers: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("3"))
    wrap_up_seconds: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("10"))
    # distribution (docs/agents.md "Strategies"), abandons under short_abandon_seconds are
    # flagged shortAbandon, service level = answered within service_level_seconds (queue.metrics)
    strategy: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'longest_idle'"))
    short_abandon_seconds: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("5"))
    service_level_seconds: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("20"))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        UniqueConstraint("account_id", "name"),
        CheckConstraint("offer_timeout_seconds > 0", name="offer_timeout_positive"),
        CheckConstraint("max_missed_offers > 0", name="max_missed_positive"),
        CheckConstraint("wrap_up_seconds >= 0", name="wrap_up_not_negative"),
        CheckConstraint(in_list("strategy", QUEUE_STRATEGIES), name="strategy_known"),
        CheckConstraint("short_abandon_seconds >= 0", name="short_abandon_not_negative"),
        CheckConstraint("service_level_seconds > 0", name="service_level_positive"),
        UniqueConstraint("id", "account_id", name="uq_queues_id_account"),
        CheckConstraint("max_wait_seconds > 0", name="max_wait_positive"),
        CheckConstraint("announce_interval_seconds > 0", name="announce_interval_positive"),
    )


class Agent(TenantOwned, Base):
    """The contact-centre face of a user: one agent per user, with its presence state."""

    __tablename__ = "agents"

    id: Mapped[uuid.UUID] = uuid_pk()
    user_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False, unique=True)
    state: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'offline'"))
    state_reason: Mapped[str | None] = mapped_column(String(255))
    state_changed_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    # where to ring the agent, e.g. "sip:1001@example.com" or "user/1001"
    contact: Mapped[str | None] = mapped_column(String(255))
    # SIP credentials on the internal profile (generated; the password Fernet-encrypted,
    # app/crypto.py; shown once by POST /api/agents/:id/sip-credentials)
    sip_username: Mapped[str | None] = mapped_column(String(64), unique=True)
    sip_password_encrypted: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        UniqueConstraint("id", "account_id", name="uq_agents_id_account"),
        ForeignKeyConstraint(
            ["user_id", "account_id"],
            ["users.id", "users.account_id"],
            name="fk_agents_user_same_account",
            ondelete="CASCADE",
        ),
        CheckConstraint(in_list("state", AGENT_STATES), name="state_known"),
    )


class AgentQueue(TenantOwned, Base):
    """Membership of an agent in a queue (carries account_id so RLS needs no join)."""

    __tablename__ = "agent_queues"

    agent_id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)
    queue_id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, index=True)
    # lower tiers are offered first, the queue's strategy picks within a tier
    tier: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("1"))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        ForeignKeyConstraint(
            ["agent_id", "account_id"],
            ["agents.id", "agents.account_id"],
            name="fk_agent_queues_agent_same_account",
            ondelete="CASCADE",
        ),
        ForeignKeyConstraint(
            ["queue_id", "account_id"],
            ["queues.id", "queues.account_id"],
            name="fk_agent_queues_queue_same_account",
            ondelete="CASCADE",
        ),
        CheckConstraint("tier BETWEEN 1 AND 9", name="tier_range"),
    )


class Callback(TenantOwned, Base):
    """A customer waiting to be called back by an agent of ``queue_id`` (at most 3 attempts)."""

    __tablename__ = "callbacks"

    id: Mapped[uuid.UUID] = uuid_pk()
    queue_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    phone_number: Mapped[str] = mapped_column(String(32), nullable=False)
    priority: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    requested_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    status: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'pending'"))
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    last_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # not dialled before this time (null: as soon as an agent is free); Reschedule sets it
    scheduled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("users.id", ondelete="SET NULL"))
    notes: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        ForeignKeyConstraint(
            ["queue_id", "account_id"],
            ["queues.id", "queues.account_id"],
            name="fk_callbacks_queue_same_account",
            ondelete="CASCADE",
        ),
        CheckConstraint(in_list("status", CALLBACK_STATUSES), name="status_known"),
        CheckConstraint("attempts BETWEEN 0 AND 3", name="attempts_range"),
        CheckConstraint("phone_number ~ '^[+]?[0-9]{1,32}$'", name="phone_number_digits"),
        # the dispatcher's pick: pending callbacks of a queue by priority desc, requested_at asc
        Index(
            "ix_callbacks_dispatch",
            "queue_id",
            text("priority DESC"),
            "requested_at",
            postgresql_where=text("status = 'pending'"),
        ),
    )
