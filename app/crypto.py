"""Secrets at rest (webhook signing secrets, Basic-auth and trunk passwords).

Fernet (AES-128-CBC + HMAC-SHA256, authenticated) with a key derived by HKDF-SHA256 from
``settings.secret_key``, so operators configure one secret and a leaked database dump alone
reveals nothing. The derivation is labelled: the same secret_key used elsewhere (e.g. as the JWT
secret in development) yields an unrelated key here.
"""
from __future__ import annotations

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.errors import SbcError
from app.settings import get_settings

_HKDF_INFO = b"saas-sbc secrets at rest v1"


class SecretDecryptionFailed(SbcError):
    """The stored token was not produced with the current secret_key (rotated, or tampered)."""

    status, code = 500, "secret_decryption_failed"


def derive_key(secret_key: str) -> bytes:
    """Fernet key (urlsafe base64 of 32 bytes) for ``secret_key``."""
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(
        secret_key.encode("utf-8")
    )
    return base64.urlsafe_b64encode(raw)


@lru_cache(maxsize=4)
def _fernet(secret_key: str) -> Fernet:
    return Fernet(derive_key(secret_key))


def encrypt_secret(plaintext: str, *, secret_key: str | None = None) -> str:
    """Ciphertext token (ASCII) to store in a ``*_encrypted`` column."""
    key = secret_key if secret_key is not None else get_settings().secret_key
    return _fernet(key).encrypt(plaintext.encode("utf-8")).decode("ascii")


def decrypt_secret(token: str, *, secret_key: str | None = None) -> str:
    """Plaintext of a stored token; raises SecretDecryptionFailed (never echoing the token)."""
    key = secret_key if secret_key is not None else get_settings().secret_key
    try:
        return _fernet(key).decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError, ValueError) as exc:
        raise SecretDecryptionFailed("stored secret cannot be decrypted with the configured key") from exc


def last4(secret: str) -> str:
    """The only part of a secret ever displayed (SPEC: signing secret shows last four)."""
    return secret[-4:]
