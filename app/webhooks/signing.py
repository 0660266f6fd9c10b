"""X-Signature: HMAC-SHA256 over the exact bytes sent, hex, no prefix (SPEC "Signature").

The signature is computed over bytes, never over a dict: the body is serialised once and the
same bytes are both signed and written to the socket, so a receiver that re-serialises the
JSON (different spacing or key order) will not match, exactly as the spec says.
"""
from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Signature"


def _key(secret: str | bytes) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else secret


def sign(body: bytes, secret: str | bytes) -> str:
    """Lower-case hex HMAC-SHA256 of ``body`` under ``secret``."""
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise TypeError("sign() takes the raw body bytes, not a parsed object")
    return hmac.new(_key(secret), bytes(body), hashlib.sha256).hexdigest()


def verify(body: bytes, secret: str | bytes, signature: str | None) -> bool:
    """What a receiver does: recompute and compare in constant time."""
    if not signature:
        return False
    return hmac.compare_digest(sign(body, secret), signature.strip().lower())
