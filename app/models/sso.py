"""A tenant's OpenID provider for single sign-on (docs/sso.md). At most one per account; the
client secret is stored Fernet-encrypted (app/crypto.py) and never returned by the API."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, CheckConstraint, DateTime, String, Text, UniqueConstraint, func, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, created_at, in_list, uuid_pk
from app.models.enums import USER_ROLES


class SsoProvider(TenantOwned, Base):
    __tablename__ = "sso_providers"

    id: Mapped[uuid.UUID] = uuid_pk()
    issuer: Mapped[str] = mapped_column(String(2048), nullable=False)
    client_id: Mapped[str] = mapped_column(String(255), nullable=False)
    client_secret_encrypted: Mapped[str] = mapped_column(Text, nullable=False)
    display_name: Mapped[str] = mapped_column(String(100), nullable=False)
    # the ID token claim read for the role (a string or a list of strings), and its mapping:
    # [{"value": "<claim value>", "role": "<role>"}, ...], first match wins; else default_role
    role_claim: Mapped[str | None] = mapped_column(String(100))
    role_mapping: Mapped[list[dict[str, Any]]] = mapped_column(
        JSONB, nullable=False, server_default=text("'[]'::jsonb"))
    default_role: Mapped[str | None] = mapped_column(String(16))
    create_users: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("false"))
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False,
                                                 server_default=func.now())
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        UniqueConstraint("account_id", name="uq_sso_providers_account"),
        CheckConstraint(f"default_role IS NULL OR {in_list('default_role', USER_ROLES)}",
                        name="default_role_known"),
    )
