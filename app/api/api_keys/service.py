"""Issuing and revoking API keys. Keys do not authenticate anything yet (SPEC: Partial)."""
from __future__ import annotations

import base64
import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import limits
from app.api.pagination import Page, keyset_page
from app.errors import NotFound
from app.models.users import ApiKey


def generate_key() -> str:
    """``sk_`` + 32 random bytes, base64url without padding (43 characters)."""
    raw = secrets.token_bytes(limits.API_KEY_RANDOM_BYTES)
    return limits.API_KEY_PREFIX + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def hash_key(key: str) -> str:
    """SHA-256 hex: keys carry 256 bits of entropy, so a fast hash is enough (no salt needed)."""
    return hashlib.sha256(key.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class CreatedKey:
    row: ApiKey
    key: str  # the only time the full key exists outside the caller's hands


def create_key(
    db: Session, account_id: uuid.UUID, created_by: uuid.UUID, *,
    name: str | None, scopes: list[str], expires_at: datetime | None,
) -> CreatedKey:
    key = generate_key()
    row = ApiKey(
        id=uuid.uuid4(),
        account_id=account_id,
        name=name,
        key_hash=hash_key(key),
        display_prefix=key[: limits.API_KEY_DISPLAY_PREFIX_LENGTH],
        scopes=list(dict.fromkeys(scopes)),  # de-duplicate, keep the caller's order
        expires_at=expires_at,
        created_by=created_by,
    )
    db.add(row)
    db.flush()
    db.refresh(row)  # server defaults (created_at)
    return CreatedKey(row=row, key=key)


def list_keys(db: Session, account_id: uuid.UUID, *, include_revoked: bool) -> list[ApiKey]:
    query = select(ApiKey).where(ApiKey.account_id == account_id)
    if not include_revoked:
        query = query.where(ApiKey.revoked_at.is_(None))
    return list(db.scalars(query.order_by(ApiKey.created_at.desc(), ApiKey.id)))


def key_page(db: Session, account_id: uuid.UUID, *, include_revoked: bool,
             cursor: str | None, limit: int) -> Page[ApiKey]:
    """Newest first, in cursor pages (the ``envelope=true`` form of the list)."""
    query = select(ApiKey).where(ApiKey.account_id == account_id)
    if not include_revoked:
        query = query.where(ApiKey.revoked_at.is_(None))
    return keyset_page(db, query, [ApiKey.created_at, ApiKey.id], cursor=cursor, limit=limit,
                       descending=True)


def revoke_key(db: Session, account_id: uuid.UUID, key_id: uuid.UUID) -> ApiKey:
    """Revoke (keep the row for audit). Revoking twice is a no-op; another tenant's key is 404."""
    row = db.scalar(
        select(ApiKey).where(ApiKey.id == key_id, ApiKey.account_id == account_id).with_for_update()
    )
    if row is None:
        raise NotFound("No such API key.", code="api_key_not_found")
    if row.revoked_at is None:
        row.revoked_at = datetime.now(timezone.utc)
    return row
