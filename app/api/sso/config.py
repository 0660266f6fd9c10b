"""The tenant's identity provider, as its admin configures it (GET/PUT/DELETE /api/account/sso).

The issuer is checked by the URL guard when saved (a clear 422 ``unsafe_url`` now) and again at
every use (``app.accounts.sso.issuer``). The client secret is encrypted at rest
(``app.crypto``), never returned nor logged: the answer says only whether one is stored."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from flask import request
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.sso.errors import SsoNotConfigured
from app.api.sso.schemas import CALLBACK_PATH
from app.crypto import encrypt_secret
from app.errors import ValidationFailed
from app.models.sso import SsoProvider
from app.settings import get_settings
from app.webhooks.url_guard import check_url_on_save

FIELDS = ("issuer", "client_id", "display_name", "role_claim", "default_role", "create_users", "enabled")


def redirect_uri(path: str = CALLBACK_PATH) -> str:
    """The redirect URI on the request's own host (the tenant's host name)."""
    return request.host_url.rstrip("/") + path


def find(db: Session, account_id: uuid.UUID) -> SsoProvider | None:
    return db.scalar(select(SsoProvider).where(SsoProvider.account_id == account_id))


def get(db: Session, account_id: uuid.UUID) -> SsoProvider:
    row = find(db, account_id)
    if row is None:
        raise SsoNotConfigured("No single sign-on is configured for this account.")
    return row


def answer(row: SsoProvider) -> dict[str, Any]:
    body = {name: getattr(row, name) for name in FIELDS}
    body.update(role_mapping=list(row.role_mapping or []), client_secret_set=True,
                redirect_uri=redirect_uri(), updated_at=row.updated_at)
    return body


def put(db: Session, account_id: uuid.UUID, data: dict[str, Any]) -> SsoProvider:
    row = find(db, account_id)
    secret = data.get("client_secret")
    if row is None and secret is None:
        raise ValidationFailed("A client secret is required when single sign-on is first configured.",
                               details={"client_secret": ["Missing data for required field."]})
    check_url_on_save(data["issuer"], allow_loopback=get_settings().allow_loopback_sso)
    if row is None:
        row = SsoProvider(id=uuid.uuid4(), account_id=account_id)
        db.add(row)
    for name in FIELDS:
        setattr(row, name, data[name])
    row.role_mapping = [{"value": rule["value"], "role": rule["role"]} for rule in data["role_mapping"]]
    if secret is not None:
        row.client_secret_encrypted = encrypt_secret(secret)
    row.updated_at = datetime.now(timezone.utc)
    db.flush()
    return row


def delete(db: Session, account_id: uuid.UUID) -> None:
    db.delete(get(db, account_id))
    db.flush()
