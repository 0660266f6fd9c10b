"""Access tokens: stateless HS256 JWTs that name the user, the account and the tenant host.

Claims beyond the registered ones (``sub`` = user id, ``exp``, ``iat``, ``jti``):

- ``acct``    account id — the RLS scope of every /api/ request;
- ``tenant``  the subdomain the token was issued on — a token is refused on any other host;
- ``session`` ``admin`` or ``agent`` — which UI the token is for (see ``/auth/exchange``);
- ``role``    the user's role at issue time (informational; permissions and licenses are
  re-read from the database on every request, so revoking a permission takes effect at once);
- ``iat_ms``  issue time in epoch milliseconds, compared with the user's sign-out cut-off
  (``app.accounts.revocation``; ``iat`` has whole seconds only).

Lifetime: ``SBC_TOKEN_LIFETIME_SECONDS`` (environment of the API process), default
``app.limits.TOKEN_LIFETIME_SECONDS`` (8 h). It is a process setting rather than a
``cluster_config`` key on purpose: a token's lifetime is a security property that must not change
because a row in a shared table was edited, and every API replica must agree on it at boot.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from flask import current_app
from flask_jwt_extended import create_access_token

from app import limits
from app.accounts.revocation import ISSUED_MS_CLAIM
from app.errors import ValidationFailed

SESSIONS: tuple[str, ...] = ("admin", "agent")
# Claim of a session that began with a single sign-on (docs/sso.md): refresh keeps it, and the
# account's TOTP requirement does not apply to it (the identity provider owns that person's MFA).
SSO_CLAIM = "sso"
LIFETIME_ENV = "SBC_TOKEN_LIFETIME_SECONDS"
CONFIG_KEY = "SBC_TOKEN_LIFETIME_SECONDS"


def lifetime_from_env() -> int:
    """Token lifetime in seconds; a bad value is a boot error, not a silent default."""
    raw = os.environ.get(LIFETIME_ENV)
    if raw is None or raw == "":
        return limits.TOKEN_LIFETIME_SECONDS
    try:
        seconds = int(raw)
    except ValueError as exc:
        raise ValidationFailed(f"{LIFETIME_ENV} must be an integer number of seconds") from exc
    if seconds <= 0:
        raise ValidationFailed(f"{LIFETIME_ENV} must be positive")
    return seconds


@dataclass(frozen=True)
class IssuedToken:
    token: str
    expires_in: int
    expires_at: datetime
    session: str


def issue_token(
    *, user_id: uuid.UUID, account_id: uuid.UUID, tenant: str, role: str, session: str,
    lifetime_seconds: int | None = None, via_sso: bool = False,
) -> IssuedToken:
    """Sign a fresh access token. Callers have already decided the session is allowed."""
    if session not in SESSIONS:
        raise ValueError(f"unknown session {session!r}")
    seconds = lifetime_seconds if lifetime_seconds is not None else int(
        current_app.config[CONFIG_KEY]
    )
    now = datetime.now(timezone.utc)
    token = create_access_token(
        identity=str(user_id),
        additional_claims={
            "acct": str(account_id), "tenant": tenant, "session": session, "role": role,
            ISSUED_MS_CLAIM: int(now.timestamp() * 1000),
            **({SSO_CLAIM: True} if via_sso else {}),
        },
        expires_delta=timedelta(seconds=seconds),
        fresh=False,
    )
    return IssuedToken(
        token=token, expires_in=seconds,
        expires_at=(now + timedelta(seconds=seconds)).replace(microsecond=0), session=session,
    )
