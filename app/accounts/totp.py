"""TOTP second factor (RFC 6238) and recovery codes — the arithmetic, without storage or HTTP.

- **Secrets**: 160 random bits (pyotp's base32 of 32 characters), shown once as an
  ``otpauth://`` URI (and a QR code of it), stored Fernet-encrypted (``app.crypto``).
- **Verification** takes the time as an argument (tests freeze it): a code is accepted for the
  current 30 s step and ``TOTP_DRIFT_STEPS`` = 1 step either side (clock drift, typing time), and
  the answer is the *step* it matched. The caller stores the step and refuses any code whose step
  is not later than the last accepted one: a code cannot be replayed, not even inside its window.
- **Recovery codes**: 10 codes of 16 base32 characters (80 random bits each), shown once, stored
  as HMAC-SHA256 hex with a key derived from ``secret_key`` (HKDF, own label) and the user id as
  salt. Why not bcrypt: bcrypt exists to slow down guessing of *human-chosen* secrets; these are
  80-bit random strings, which no amount of fast hashing can enumerate (2^80 tries), and bcrypt
  would cost ~250 ms per stored code on every recovery sign-in (up to 10 comparisons, since a
  salted bcrypt hash cannot be looked up). The keyed hash also means a database dump alone
  cannot even be checked against a guess, and equality lookup makes single use atomic in SQL
  (``array_remove``).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from functools import lru_cache

import pyotp
import segno
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app import limits
from app.settings import get_settings

ISSUER = "SaaS-SBC"
_RECOVERY_HKDF_INFO = b"saas-sbc recovery codes v1"
_BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
RECOVERY_GROUP = 4  # shown as XXXX-XXXX-XXXX-XXXX


def new_secret() -> str:
    """A fresh base32 secret (160 bits, the size RFC 4226 recommends for HMAC-SHA1)."""
    return pyotp.random_base32()


def provisioning_uri(secret: str, username: str, subdomain: str) -> str:
    """The ``otpauth://totp/...`` URI authenticator apps scan: labelled user@tenant."""
    return pyotp.TOTP(secret, digits=limits.TOTP_DIGITS, interval=limits.TOTP_STEP_SECONDS).provisioning_uri(
        name=f"{username}@{subdomain}", issuer_name=ISSUER)


def qr_svg_data_uri(uri: str) -> str:
    """The URI as a QR code, an SVG ``data:`` URI a page can put in an ``<img src>``."""
    return segno.make(uri, error="m").svg_data_uri(scale=4)


def step_at(now: float) -> int:
    return int(now // limits.TOTP_STEP_SECONDS)


def code_at_step(secret: str, step: int) -> str:
    """The code of ``step`` (tests use it to type the code an authenticator app would show)."""
    return pyotp.TOTP(secret, digits=limits.TOTP_DIGITS, interval=limits.TOTP_STEP_SECONDS).generate_otp(step)


def looks_like_totp(code: str) -> bool:
    return len(code) == limits.TOTP_DIGITS and code.isascii() and code.isdigit()


def matching_step(secret: str, code: str, now: float) -> int | None:
    """The time step ``code`` is valid for within ±``TOTP_DRIFT_STEPS`` of ``now``, else None.
    Every candidate is compared (constant time each), so timing does not say which one matched."""
    if not looks_like_totp(code):
        return None
    current = step_at(now)
    found = None
    for step in range(current - limits.TOTP_DRIFT_STEPS, current + limits.TOTP_DRIFT_STEPS + 1):
        if hmac.compare_digest(code_at_step(secret, step), code) and found is None:
            found = step
    return found


def new_recovery_codes() -> list[str]:
    """``RECOVERY_CODE_COUNT`` codes as shown to the user (groups of 4 joined by '-')."""
    codes = []
    for _ in range(limits.RECOVERY_CODE_COUNT):
        raw = "".join(secrets.choice(_BASE32) for _ in range(limits.RECOVERY_CODE_LENGTH))
        codes.append("-".join(raw[i:i + RECOVERY_GROUP] for i in range(0, len(raw), RECOVERY_GROUP)))
    return codes


def normalise_recovery_code(code: str) -> str:
    """What the user typed, without separators or spaces, upper case (typing it either way works)."""
    return "".join(ch for ch in code.upper() if ch not in "- ")


@lru_cache(maxsize=4)
def _recovery_key(secret_key: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_RECOVERY_HKDF_INFO).derive(
        secret_key.encode("utf-8"))


def recovery_code_hash(user_id: uuid.UUID, code: str, *, secret_key: str | None = None) -> str:
    """Keyed hash of a recovery code, salted with the user id (the same code of two users hashes
    differently). See the module docstring for why not bcrypt."""
    key = _recovery_key(secret_key if secret_key is not None else get_settings().secret_key)
    message = user_id.bytes + normalise_recovery_code(code).encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()

