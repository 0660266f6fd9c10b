"""People who log in (admins, supervisors, agents) and the API keys they issue."""
from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, created_at, in_list, uuid_pk
from app.models.enums import USER_ROLES


class User(TenantOwned, Base):
    __tablename__ = "users"

    id: Mapped[uuid.UUID] = uuid_pk()
    username: Mapped[str] = mapped_column(String(255), nullable=False)
    password_hash: Mapped[str] = mapped_column(String(255), nullable=False)  # bcrypt, never returned
    role: Mapped[str] = mapped_column(String(16), nullable=False, server_default=text("'agent'"))
    permissions: Mapped[list[str]] = mapped_column(
        ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")
    )
    email: Mapped[str | None] = mapped_column(String(320))
    is_active: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    created_at: Mapped[datetime] = created_at()
    # TOTP second factor (app/accounts/totp.py, migration 0010): the secret Fernet-encrypted
    # (app/crypto.py), active once ``totp_confirmed_at`` is set; ``totp_last_step`` is the last
    # accepted time step (a code is never accepted twice); recovery codes as keyed hashes, a
    # used one removed from the array. Never returned by the API.
    totp_secret_encrypted: Mapped[str | None] = mapped_column(Text)
    totp_confirmed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    totp_last_step: Mapped[int | None] = mapped_column(BigInteger)
    totp_recovery_hashes: Mapped[list[str]] = mapped_column(
        ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")
    )
    # Single sign-on (app/accounts/sso, migration 0011): the identity provider's stable subject,
    # ``iss`` and ``sub`` together (OIDC Core 5.7), what a sign-in is matched by; both or neither.
    sso_issuer: Mapped[str | None] = mapped_column(String(2048))
    sso_subject: Mapped[str | None] = mapped_column(String(255))

    __table_args__ = (
        UniqueConstraint("account_id", "username"),
        UniqueConstraint("account_id", "sso_issuer", "sso_subject", name="uq_users_account_sso_subject"),
        CheckConstraint("(sso_issuer IS NULL) = (sso_subject IS NULL)", name="sso_subject_pair"),
        # target of composite foreign keys that pin a child row to the same account
        UniqueConstraint("id", "account_id", name="uq_users_id_account"),
        CheckConstraint(in_list("role", USER_ROLES), name="role_known"),
        CheckConstraint(
            "permissions <@ ARRAY['api_keys.create', 'api_keys.delete', 'recordings.view']::text[]",
            name="permissions_known",
        ),
    )


class ApiKey(TenantOwned, Base):
    """Only the SHA-256 hex of the key and a 10-character display prefix are stored."""

    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str | None] = mapped_column(String(255))
    key_hash: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    display_prefix: Mapped[str] = mapped_column(String(10), nullable=False)
    scopes: Mapped[list[str]] = mapped_column(
        ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")
    )
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = created_at()
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        CheckConstraint("key_hash ~ '^[0-9a-f]{64}$'", name="key_hash_sha256_hex"),
        CheckConstraint("char_length(display_prefix) = 10", name="display_prefix_length"),
        Index("ix_api_keys_account_active", "account_id", postgresql_where=text("revoked_at IS NULL")),
    )
