"""Restricted tokens handed out between a verified password and a session.

- ``mfa_challenge`` (``MFA_CHALLENGE_SECONDS``, 5 min): the password was right and the user has
  TOTP; ``POST /auth/login/mfa`` trades it plus a code for the session. Single use.
- ``mfa_enrolment`` (``MFA_ENROLMENT_TOKEN_SECONDS``, 15 min): the password was right, the tenant
  requires a second factor and the user has none; it opens ``/auth/mfa/totp`` and
  ``/auth/mfa/totp/confirm`` only, and the confirmation answers with the session.

They are HS256 JWTs signed with a key *derived* from the JWT secret (HMAC, own label), not with
the secret itself: a restricted token presented as a Bearer token on ``/api/`` (or to the agent
channel, or to ``/auth/refresh``) fails the signature check — 401 ``invalid_token`` — by
construction, rather than by every token check remembering to look at a claim. The audience
names the purpose, so one kind cannot stand for the other either.
"""
from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from dataclasses import dataclass

import jwt as pyjwt
from flask import current_app

from app import limits
from app.errors import Unauthorized

CHALLENGE = "mfa_challenge"
ENROLMENT = "mfa_enrolment"
LIFETIMES = {CHALLENGE: limits.MFA_CHALLENGE_SECONDS, ENROLMENT: limits.MFA_ENROLMENT_TOKEN_SECONDS}
_KEY_LABEL = b"saas-sbc restricted auth tokens v1"
_ERRORS = {
    CHALLENGE: ("invalid_mfa_challenge", "The sign-in challenge is not valid; log in again."),
    ENROLMENT: ("invalid_enrolment_token", "The enrolment token is not valid; log in again."),
}


@dataclass(frozen=True)
class Restricted:
    """A verified restricted token."""

    purpose: str
    user_id: uuid.UUID
    account_id: uuid.UUID
    tenant: str
    session: str | None  # the session asked for at login (None: the default one)
    jti: str
    exp: int

    @property
    def claims(self) -> dict[str, object]:
        """The shape the deny-list reads (``app.accounts.revocation``): single use is a revoked jti."""
        return {"jti": self.jti, "exp": self.exp, "sub": str(self.user_id)}


def _key() -> bytes:
    secret = str(current_app.config["JWT_SECRET_KEY"]).encode("utf-8")
    return hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest()


def issue(purpose: str, *, user_id: uuid.UUID, account_id: uuid.UUID, tenant: str,
          session: str | None) -> tuple[str, int]:
    """(token, lifetime seconds)."""
    lifetime = LIFETIMES[purpose]
    now = int(time.time())
    token = pyjwt.encode({
        "sub": str(user_id), "acct": str(account_id), "tenant": tenant, "sess": session,
        "aud": f"sbc:{purpose}", "jti": uuid.uuid4().hex, "iat": now, "exp": now + lifetime,
    }, _key(), algorithm="HS256")
    return token, lifetime


def read(token: str, purpose: str, tenant: str) -> Restricted:
    """The verified token, or 401 ``invalid_mfa_challenge`` / ``invalid_enrolment_token``
    (``mfa_challenge_expired`` / ``enrolment_token_expired`` when only its time is up)."""
    code, message = _ERRORS[purpose]
    try:
        claims = pyjwt.decode(token, _key(), algorithms=["HS256"], audience=f"sbc:{purpose}",
                              options={"require": ["exp", "iat", "sub", "jti", "aud"]})
    except pyjwt.ExpiredSignatureError:
        expired = "mfa_challenge_expired" if purpose == CHALLENGE else "enrolment_token_expired"
        raise Unauthorized("The sign-in step took too long; log in again.", code=expired) from None
    except pyjwt.PyJWTError:
        raise Unauthorized(message, code=code) from None
    if claims.get("tenant") != tenant:
        raise Unauthorized("This token was issued for another tenant.", code="tenant_mismatch")
    try:
        return Restricted(purpose=purpose, user_id=uuid.UUID(str(claims["sub"])),
                          account_id=uuid.UUID(str(claims["acct"])), tenant=tenant,
                          session=claims.get("sess") if claims.get("sess") in ("admin", "agent") else None,
                          jti=str(claims["jti"]), exp=int(claims["exp"]))
    except (KeyError, ValueError, TypeError):
        raise Unauthorized(message, code=code) from None
