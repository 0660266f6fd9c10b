"""Per-agent SIP credentials for the ``internal`` profile.

The user name is generated (never the agent's login name: it is visible in every REGISTER),
the password is random, kept Fernet-encrypted (app/crypto.py) and shown once. FreeSWITCH gets
only the digest A1 hash (``a1-hash`` in the generated directory), so the generated files on
the switch's disk never hold a usable password for another realm.
"""
from __future__ import annotations

import hashlib
import secrets

SIP_USERNAME_PREFIX = "ag"
_USERNAME_RANDOM_BYTES = 6      # 12 hex digits: collisions are refused by the unique column
_PASSWORD_RANDOM_BYTES = 18     # 24 url-safe characters


def new_username() -> str:
    return f"{SIP_USERNAME_PREFIX}{secrets.token_hex(_USERNAME_RANDOM_BYTES)}"


def new_password() -> str:
    return secrets.token_urlsafe(_PASSWORD_RANDOM_BYTES)


def a1_hash(username: str, realm: str, password: str) -> str:
    """RFC 2617 HA1 = MD5(username:realm:password), what sofia's ``a1-hash`` param takes."""
    return hashlib.md5(f"{username}:{realm}:{password}".encode("utf-8")).hexdigest()  # noqa: S324 - the digest scheme's own hash
