"""The record of a started sign-in, keyed by its ``state``: single use, short-lived, in Redis.

``state`` (CSRF: the callback belongs to a sign-in this browser started), ``nonce`` (the ID token
was minted for this sign-in, not replayed from another) and the PKCE ``code_verifier`` are random
(Authlib's ``generate_token``, 48 characters, ~285 bits). The record also pins the tenant the
sign-in started on: a callback on another tenant's host is refused, whatever the provider says.

The key is a SHA-256 of the state (someone who can read Redis cannot finish a sign-in with a key
name), and ``take`` is one ``GETDEL``: two callbacks racing with the same state cannot both win.
Redis unreachable: 503 ``session_store_unavailable`` (as for revocation) — the flow cannot be
checked, so it is not finished.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import asdict, dataclass

import redis
from authlib.common.security import generate_token

from app import limits
from app.accounts.login_throttle import throttle_client
from app.errors import ServiceUnavailable
from app.settings import get_settings

TOKEN_LENGTH = 48


@dataclass(frozen=True)
class PendingSignIn:
    tenant: str
    account_id: str
    session: str | None
    nonce: str
    code_verifier: str
    redirect_uri: str


def new_token() -> str:
    return generate_token(TOKEN_LENGTH)


def _unavailable() -> ServiceUnavailable:
    return ServiceUnavailable("Sign-ins cannot be checked right now; try again in a moment.",
                              code="session_store_unavailable")


class FlowStates:
    def __init__(self, client: redis.Redis | None = None) -> None:
        settings = get_settings()
        self.redis = client or throttle_client(settings.redis_url)
        self.prefix = settings.redis_key_prefix + "sso:state:"

    def _key(self, state: str) -> str:
        return self.prefix + hashlib.sha256(state.encode("utf-8")).hexdigest()

    def put(self, *, tenant: str, account_id: uuid.UUID, session: str | None, redirect_uri: str) -> tuple[str, PendingSignIn]:
        """A new state and its record (kept ``SSO_STATE_SECONDS``)."""
        state = new_token()
        pending = PendingSignIn(tenant=tenant, account_id=str(account_id), session=session, nonce=new_token(),
                                code_verifier=new_token(), redirect_uri=redirect_uri)
        try:
            self.redis.set(self._key(state), json.dumps(asdict(pending)), ex=limits.SSO_STATE_SECONDS)
        except redis.RedisError:
            raise _unavailable() from None
        return state, pending

    def take(self, state: str) -> PendingSignIn | None:
        """The record, removed in the same step; None when unknown, expired or already used."""
        try:
            raw = self.redis.getdel(self._key(state))
        except redis.RedisError:
            raise _unavailable() from None
        if raw is None:
            return None
        return PendingSignIn(**json.loads(raw))
