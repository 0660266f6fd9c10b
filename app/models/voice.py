"""What answers a call: applications, visual call flows and the phone numbers pointing at them."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    DateTime,
    ForeignKeyConstraint,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, created_at, in_list, uuid_pk
from app.models.enums import ANSWERING_MODES, HOOK_METHODS


class CallFlow(TenantOwned, Base):
    """A visual flow; ``definition`` is the graph the flow engine (app/flows) validates and runs."""

    __tablename__ = "call_flows"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    definition: Mapped[dict[str, Any]] = mapped_column(
        JSONB, nullable=False, server_default=text("'{}'::jsonb")
    )
    created_at: Mapped[datetime] = created_at()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (UniqueConstraint("id", "account_id", name="uq_call_flows_id_account"),)


class Application(TenantOwned, Base):
    """Handling order (SPEC): call_flow_sid → flow engine; else call_hook_url; else app_json."""

    __tablename__ = "applications"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    call_flow_sid: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    call_hook_url: Mapped[str | None] = mapped_column(Text)
    call_hook_method: Mapped[str] = mapped_column(String(8), nullable=False, server_default=text("'POST'"))
    call_status_hook_url: Mapped[str | None] = mapped_column(Text)
    app_json: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB)
    language: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'en-US'"))
    voice: Mapped[str] = mapped_column(String(64), nullable=False, server_default=text("'kal'"))
    # secrets at rest: Fernet tokens from app.crypto; only last4 is ever shown
    signing_secret_encrypted: Mapped[str | None] = mapped_column(Text)
    signing_secret_last4: Mapped[str | None] = mapped_column(String(4))
    basic_auth_username: Mapped[str | None] = mapped_column(String(255))
    basic_auth_password_encrypted: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = created_at()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        UniqueConstraint("id", "account_id", name="uq_applications_id_account"),
        # a flow of another tenant can never be attached, even by guessing its id
        ForeignKeyConstraint(
            ["call_flow_sid", "account_id"],
            ["call_flows.id", "call_flows.account_id"],
            name="fk_applications_call_flow_same_account",
        ),
        CheckConstraint(in_list("call_hook_method", HOOK_METHODS), name="call_hook_method_known"),
        CheckConstraint(
            "app_json IS NULL OR jsonb_typeof(app_json) = 'array'", name="app_json_is_array"
        ),
    )


class PhoneNumber(TenantOwned, Base):
    """A DID. ``number`` is digits only and unique across the platform (inbound routing key)."""

    __tablename__ = "phone_numbers"

    id: Mapped[uuid.UUID] = uuid_pk()
    number: Mapped[str] = mapped_column(String(20), nullable=False, unique=True)
    application_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    answering_mode: Mapped[str] = mapped_column(
        String(16), nullable=False, server_default=text("'call_flow'")
    )
    # the flow that answered before switching to webhook mode; restored when switching back
    saved_call_flow_sid: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        ForeignKeyConstraint(
            ["application_id", "account_id"],
            ["applications.id", "applications.account_id"],
            name="fk_phone_numbers_application_same_account",
        ),
        ForeignKeyConstraint(
            ["saved_call_flow_sid", "account_id"],
            ["call_flows.id", "call_flows.account_id"],
            name="fk_phone_numbers_saved_flow_same_account",
        ),
        CheckConstraint("number ~ '^[0-9]{1,20}$'", name="number_digits"),
        CheckConstraint(in_list("answering_mode", ANSWERING_MODES), name="answering_mode_known"),
    )
