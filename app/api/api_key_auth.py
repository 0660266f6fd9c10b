"""API keys as credentials on ``/api/*``: ``Authorization: Bearer sk_…`` or ``X-API-Key: sk_…``.

Why this shape:
- **Tenant.** The key is looked up inside the Host's tenant only (the account id comes from the
  ``account_id_for_subdomain`` SECURITY DEFINER function, the key row is read under that
  account's row-level security). Another tenant's key is simply not there: it can never act on
  a host that is not its own, and the answer does not reveal that it exists elsewhere.
- **Who acts.** A key acts for the account on behalf of the user who created it, in an admin
  session, with that user's role and permissions *limited to the key's scopes*; a key whose
  creator was deleted or deactivated stops working. Keys never manage keys (``/api/api-keys``
  is not in any scope), so a leaked key cannot mint a wider one.
- **Scopes.** One scope name per resource family (``SCOPE_BY_BLUEPRINT``: an explicit table,
  checked against the routed blueprint, never a name built from user input). ``<scope>:read``
  grants only GET/HEAD.
- **last_used_at** is written at most once per ``limits.API_KEY_LAST_USED_RESOLUTION_SECONDS``
  per key (only when the stored value is older), so a busy key costs one UPDATE a minute, not
  one per request.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Optional

from flask import request
from sqlalchemy import select, update

from app import limits
from app.api.api_keys.service import hash_key
from app.errors import Forbidden, Unauthorized
from app.models.users import ApiKey

API_KEY_HEADER = "X-API-Key"
READ_ONLY_SUFFIX = ":read"
_READ_METHODS = frozenset({"GET", "HEAD"})

# Routed blueprint name -> the scope a key needs for it (docs/api.md "API keys as credentials").
# A blueprint absent from this table (api_keys) is never reachable with a key.
SCOPE_BY_BLUEPRINT: dict[str, str] = {
    "account": "account",
    "calls": "calls",
    "call_control": "call_control",
    "call_records": "recordings",
    "call_record_media": "recordings",
    "recordings": "recordings",
    "applications": "applications",
    "phone_numbers": "phone_numbers",
    "call_flows": "call_flows",
    "carriers": "carriers",
    "gateways": "carriers",
    "lcr": "lcr",
    "lcr_explain": "lcr",
    "sip_targets": "sip_targets",
    "queues": "queues",
    "callbacks": "queues",
    "moh": "queues",
    "live": "queues",  # the live view's tickets (the stream authenticates by its ticket)
    "users": "users",
    "agents": "agents",
    "campaigns": "campaigns",
    "do_not_call": "campaigns",
}
KNOWN_SCOPES: frozenset[str] = frozenset(SCOPE_BY_BLUEPRINT.values())


def presented_key() -> Optional[str]:
    """The API key this request presents, or None when it presents a JWT (or nothing).
    ``X-API-Key`` wins; a Bearer value that starts with ``sk_`` is a key, never a JWT."""
    header = request.headers.get(API_KEY_HEADER)
    if header is not None:
        return header.strip()
    auth = request.headers.get("Authorization", "")
    scheme, _, value = auth.partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value.startswith(limits.API_KEY_PREFIX):
        return value
    return None


def _invalid() -> Unauthorized:
    return Unauthorized("The API key is not valid for this tenant.", code="invalid_api_key")


def find_key(db, account_id: uuid.UUID, key: str) -> ApiKey:  # noqa: ANN001 (Session)
    """The account's key row for ``key``, usable now; 401 otherwise (each refusal its own code)."""
    if not key.startswith(limits.API_KEY_PREFIX) or not key.isascii() or len(key) > 128:
        raise _invalid()
    row = db.scalar(select(ApiKey).where(ApiKey.account_id == account_id,
                                         ApiKey.key_hash == hash_key(key)))
    if row is None:
        raise _invalid()
    now = datetime.now(timezone.utc)
    if row.revoked_at is not None:
        raise Unauthorized("This API key was revoked.", code="api_key_revoked")
    if row.expires_at is not None and row.expires_at <= now:
        raise Unauthorized("This API key has expired.", code="api_key_expired")
    return row


def required_scope() -> Optional[str]:
    """The scope the routed endpoint needs; None for an unrouted path (it answers 404)."""
    if request.url_rule is None:
        return None
    scope = SCOPE_BY_BLUEPRINT.get(request.blueprint or "")
    if scope is None:
        raise Forbidden("API keys cannot be used on this endpoint; log in instead.",
                        code="api_key_not_allowed")
    return scope


def check_scope(scopes: list[str], scope: Optional[str], method: str) -> None:
    """403 ``scope_required`` unless ``scopes`` holds ``scope`` (or ``scope:read`` for a read)."""
    if scope is None:
        return
    if scope in scopes or (method in _READ_METHODS and scope + READ_ONLY_SUFFIX in scopes):
        return
    raise Forbidden(f"This API key lacks the scope '{scope}'.", code="scope_required",
                    details={"scope": scope})


def touch_last_used(db, row: ApiKey) -> None:  # noqa: ANN001 (Session)
    """At most one write per key per resolution window (the WHERE makes racing replicas agree)."""
    now = datetime.now(timezone.utc)
    window = timedelta(seconds=limits.API_KEY_LAST_USED_RESOLUTION_SECONDS)
    if row.last_used_at is not None and now - row.last_used_at < window:
        return
    db.execute(update(ApiKey)
               .where(ApiKey.id == row.id,
                      (ApiKey.last_used_at.is_(None)) | (ApiKey.last_used_at < now - window))
               .values(last_used_at=now))
    db.commit()
