"""bcrypt password hashing (SPEC: passwords stored hashed with bcrypt)."""
from __future__ import annotations

import bcrypt

# bcrypt's cost; tests pass a lower value through ``rounds`` to stay fast (the hash records
# its own cost, so verification needs no setting).
DEFAULT_ROUNDS = 12
# bcrypt only looks at the first 72 bytes; longer passwords are refused rather than truncated.
MAX_PASSWORD_BYTES = 72


def hash_password(password: str, *, rounds: int = DEFAULT_ROUNDS) -> str:
    data = password.encode("utf-8")
    if len(data) > MAX_PASSWORD_BYTES:
        raise ValueError(f"password longer than {MAX_PASSWORD_BYTES} bytes")
    return bcrypt.hashpw(data, bcrypt.gensalt(rounds=rounds)).decode("ascii")


def verify_password(password: str, password_hash: str) -> bool:
    """False on mismatch or on a malformed hash; never raises for user input."""
    data = password.encode("utf-8")
    if len(data) > MAX_PASSWORD_BYTES:
        return False
    try:
        return bcrypt.checkpw(data, password_hash.encode("ascii"))
    except ValueError:
        return False
