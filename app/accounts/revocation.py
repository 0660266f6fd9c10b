"""Revocable sessions: which login tokens are dead before their ``exp``, kept in Redis.

Tokens stay stateless JWTs (SPEC); revocation is a deny-list, two facts per user:

- **revoked token ids** (``auth:jti:<jti>``): ``POST /auth/logout`` kills the presented token
  only. The key lives until the token would have expired anyway (TTL = its remaining lifetime).
- **a per-user cut-off** (``auth:cutoff:<user id>`` = epoch ms): every token of the user issued
  before it is dead — "sign out everywhere", a password change, a role change, a TOTP reset.
  The key lives one token lifetime after the last cut-off: by then every token it could kill
  has expired. A token's issue time is its ``iat_ms`` claim (``iat`` has whole seconds only: a
  sign-in in the same second as the cut-off must survive it); tokens without it (minted before
  this change) use ``iat`` × 1000. Cut-offs and issue times come from the API processes' clocks:
  revocation is as precise as their synchronisation (NTP: milliseconds).

Checked on **every** authenticated request (REST and the agent channel's first message), not
cached: it is one ``MGET`` of two keys, one Redis round trip (about 0.1 ms on loopback; figure in
docs/api.md), cheaper than the database reads each request already does, and it makes a logout
effective at once on every API process.

**Redis unreachable: fail closed** for login tokens — ``ServiceUnavailable``
``session_store_unavailable`` (503), not a pass. Revocation exists for the moment a token must
stop working (a stolen laptop, a fired employee, a leaked token); failing open would revive every
revoked token for as long as Redis is down, and an attacker who can slow Redis down could choose
that moment. A 503 says "try again" honestly, while API keys (not sessions: revoked in the
database) keep working, so server-to-server integrations are unaffected. The same rule holds for
writing: a logout or sign-out that cannot be recorded answers 503 instead of pretending.
(Contrast with the login throttle, which fails open: it limits guessing, and refusing every
login during an outage would lock everyone out for a cache fault; here nobody is locked out who
is not already signed in, and signing in again works as soon as Redis does.)
"""
from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Callable, Optional

import redis

from app.accounts.login_throttle import throttle_client
from app.errors import ServiceUnavailable, Unauthorized
from app.settings import get_settings

log = logging.getLogger(__name__)

Clock = Callable[[], float]  # seconds since the epoch
ISSUED_MS_CLAIM = "iat_ms"

# KEYS: cut-off key. ARGV: cut-off ms, ttl ms. Keeps the later of the stored and the new cut-off
# (two processes revoking at once with slightly different clocks must not move it backwards).
_CUTOFF = """
local old = tonumber(redis.call('GET', KEYS[1]) or '0')
local new = tonumber(ARGV[1])
if new < old then new = old end
redis.call('SET', KEYS[1], tostring(new), 'PX', tonumber(ARGV[2]))
return new
"""


def _unavailable(exc: Exception, what: str) -> ServiceUnavailable:
    log.warning("session store unavailable (%s): %s refused", exc, what)
    return ServiceUnavailable(
        "Sessions cannot be checked right now; try again in a moment.",
        code="session_store_unavailable")


def issued_ms(claims: dict[str, Any]) -> int:
    """When the token was issued, in epoch ms (``iat_ms``, else ``iat`` × 1000)."""
    value = claims.get(ISSUED_MS_CLAIM)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    iat = claims.get("iat")
    return int(iat) * 1000 if isinstance(iat, (int, float)) and not isinstance(iat, bool) else 0


class SessionRevocations:
    """The deny-list. ``lifetime_seconds`` is the API's token lifetime (TTL of a cut-off);
    ``clock`` replaces ``time.time`` in tests."""

    def __init__(self, lifetime_seconds: int, client: redis.Redis | None = None, *,
                 key_prefix: str | None = None, clock: Optional[Clock] = None) -> None:
        settings = get_settings()
        self.redis = client or throttle_client(settings.redis_url)
        self.prefix = (settings.redis_key_prefix if key_prefix is None else key_prefix) + "auth:"
        self.lifetime_ms = int(lifetime_seconds) * 1000
        self.clock = clock or time.time
        self._cutoff = self.redis.register_script(_CUTOFF)

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def jti_key(self, jti: str) -> str:
        return f"{self.prefix}jti:{jti}"

    def cutoff_key(self, user_id: uuid.UUID | str) -> str:
        return f"{self.prefix}cutoff:{user_id}"

    def check(self, claims: dict[str, Any]) -> None:
        """Raise 401 ``token_revoked`` for a revoked token, 503 when Redis cannot tell."""
        jti = str(claims.get("jti") or "")
        user = str(claims.get("sub") or "")
        try:
            revoked, cutoff = self.redis.mget([self.jti_key(jti), self.cutoff_key(user)])
        except redis.RedisError as exc:
            raise _unavailable(exc, "token check") from None
        if (jti and revoked is not None) or (cutoff is not None and issued_ms(claims) < int(cutoff)):
            raise Unauthorized("This session was signed out; log in again.", code="token_revoked")

    def revoke_token(self, claims: dict[str, Any]) -> None:
        """This token only (logout), until it would have expired."""
        jti = str(claims.get("jti") or "")
        if not jti:
            return
        exp_ms = int(claims.get("exp") or 0) * 1000
        ttl_ms = max(exp_ms - self.now_ms(), 1000)
        try:
            self.redis.set(self.jti_key(jti), "1", px=ttl_ms)
        except redis.RedisError as exc:
            raise _unavailable(exc, "logout") from None

    def consume_once(self, claims: dict[str, Any]) -> bool:
        """Mark a single-use token (a sign-in challenge) used; False if it already was."""
        jti = str(claims.get("jti") or "")
        exp_ms = int(claims.get("exp") or 0) * 1000
        try:
            return bool(self.redis.set(self.jti_key(jti), "1", px=max(exp_ms - self.now_ms(), 1000), nx=True))
        except redis.RedisError as exc:
            raise _unavailable(exc, "second-factor sign-in") from None

    def revoke_user(self, user_id: uuid.UUID | str) -> int:
        """Every token of the user issued before now; returns the cut-off (epoch ms)."""
        try:
            return int(self._cutoff(keys=[self.cutoff_key(user_id)],
                                    args=[self.now_ms(), self.lifetime_ms]))
        except redis.RedisError as exc:
            raise _unavailable(exc, "sign-out") from None
