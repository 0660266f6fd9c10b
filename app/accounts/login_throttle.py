"""Failed-login throttle for ``POST /auth/login``, in Redis.

Without it an attacker can guess passwords at bcrypt speed for ever. Two budgets of failures
are kept, both over a sliding window of ``WINDOW_SECONDS``:

- per (tenant subdomain, username): ``USER_FAILURE_LIMIT`` = 5. Humans rarely mistype a
  password more than two or three times in a row, so 5 leaves room for typos and a caps-lock key
  while capping an online guesser at 5 guesses / 15 min = 480 a day per account, far too few to
  walk even a short common-password list against a bcrypt-hashed password. The username is
  counted whether or not it exists, so the throttle is no user-enumeration oracle.
- per client address: ``ADDRESS_FAILURE_LIMIT`` = 20. The per-user budget cannot see
  *password spraying* (one password tried against many usernames); 20 stops that from one host
  while leaving room for an office behind one NAT address where a few people mistype at once.
  IPv6 clients are counted per /64 (``ADDRESS_IPV6_PREFIX``): one host usually owns a whole /64
  and could otherwise take a fresh address for every guess.

Why this shape:
- Each budget is a sorted set of attempt tokens scored by time (Redis ``TIME``, so API replicas
  with skewed clocks agree). One Lua script drops entries older than the window, refuses when
  either budget is spent (answering how long until the oldest counted failure leaves the
  window), and otherwise *reserves* a slot in both — atomically, so a burst of concurrent
  guesses cannot all pass the check before any of them is recorded.
- The reserved slot IS the failure record: a wrong password needs no second round trip, and an
  attempt whose process dies mid-check still counts. A verified password deletes the user's
  set (a successful login clears the user counter) and removes only its own slot from the
  address set (one user's success must not forgive the address's failures against others).
- While a budget is spent the caller answers 429 **before** looking up the user or running
  bcrypt: no CPU is burnt on a locked target, and even the correct password gets 429, so a
  locked account is no oracle for which guess was right.
- Locking out by username is a trade-off every per-account lockout makes: anyone can spend a
  user's budget and keep them out for up to 15 minutes. The window is short on purpose; the
  address budget does not help here (the victim logs in from another address).

When Redis is unreachable the throttle fails OPEN (logs a warning, admits the attempt without
counting): a cache outage must not lock every user out of the product. The limit is briefly
unenforced instead.

The client address is ``request.remote_addr``. No trusted-proxy setting exists, so
``X-Forwarded-For`` is ignored (trusting it unconditionally would let any client pick the
address it is counted under); behind a reverse proxy every client shares the proxy's address
budget until such a setting is added.
"""
from __future__ import annotations

import hashlib
import ipaddress
import logging
import math
import uuid
from dataclasses import dataclass

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from app.errors import TooManyLoginAttempts
from app.settings import get_settings

log = logging.getLogger(__name__)

WINDOW_SECONDS = 15 * 60
USER_FAILURE_LIMIT = 5
ADDRESS_FAILURE_LIMIT = 20
ADDRESS_IPV6_PREFIX = 64
# A login waits for Redis at most this long (one try, one immediate retry) before failing open;
# redis-py's default retry policy backs off for seconds, which every login would pay in an outage.
REDIS_TIMEOUT_SECONDS = 0.5
REDIS_RETRIES = 1

# KEYS: user zset, address zset. ARGV: window ms, user limit, address limit, attempt token.
# Returns 0 when the attempt is admitted (slot reserved in both), else ms until it would be.
_BEGIN = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limits = {tonumber(ARGV[2]), tonumber(ARGV[3])}
local wait = 0
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local n = redis.call('ZCARD', key)
  if n >= limits[i] then
    local edge = redis.call('ZRANGE', key, n - limits[i], n - limits[i], 'WITHSCORES')
    local w = tonumber(edge[2]) + window - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return wait end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
end
return 0
"""


def throttle_client(url: str) -> redis.Redis:
    """A Redis client that gives up fast, so an outage costs a login about a second, not more."""
    return redis.Redis.from_url(
        url, socket_timeout=REDIS_TIMEOUT_SECONDS, socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
        retry=Retry(NoBackoff(), REDIS_RETRIES))


def address_scope(address: str | None) -> str:
    """The unit an address budget is kept for: the IPv4 address, or the IPv6 /64."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:192.0.2.1 is the IPv4 client 192.0.2.1
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, ADDRESS_IPV6_PREFIX), strict=False))
    return str(ip)


@dataclass(frozen=True)
class LoginAttempt:
    """An admitted attempt. Leave it alone on a wrong password (its slot is the failure record);
    call ``succeeded`` once the password is verified, ``abandoned`` if nothing was verified."""

    throttle: "LoginThrottle | None"  # None: Redis was unreachable, nothing was counted
    user_key: str = ""
    address_key: str = ""
    token: str = ""

    def succeeded(self) -> None:
        if self.throttle is not None:
            self.throttle._forget(self, clear_user=True)

    def abandoned(self) -> None:
        if self.throttle is not None:
            self.throttle._forget(self, clear_user=False)


class LoginThrottle:
    """See the module docstring for the budgets and why they are kept this way."""

    def __init__(self, client: redis.Redis | None = None, *, key_prefix: str | None = None) -> None:
        settings = get_settings()
        self.redis = client or throttle_client(settings.redis_url)
        self.prefix = (settings.redis_key_prefix if key_prefix is None else key_prefix) + "login:"
        self._begin = self.redis.register_script(_BEGIN)

    def user_key(self, subdomain: str, username: str) -> str:
        # hashed: usernames are arbitrary text up to 255 characters; keys stay short and inert
        digest = hashlib.sha256(f"{subdomain}\0{username}".encode("utf-8")).hexdigest()
        return f"{self.prefix}user:{digest}"

    def address_key(self, address: str | None) -> str:
        return f"{self.prefix}addr:{address_scope(address)}"

    def begin(self, subdomain: str, username: str, address: str | None) -> LoginAttempt:
        """Reserve a slot in both budgets, or raise ``TooManyLoginAttempts`` (nothing counted)."""
        attempt = LoginAttempt(self, self.user_key(subdomain, username), self.address_key(address),
                               uuid.uuid4().hex)
        try:
            wait_ms = int(self._begin(
                keys=[attempt.user_key, attempt.address_key],
                args=[WINDOW_SECONDS * 1000, USER_FAILURE_LIMIT, ADDRESS_FAILURE_LIMIT, attempt.token],
            ))
        except redis.RedisError as exc:
            log.warning("login throttle unavailable (%s): login attempt not rate limited", exc)
            return LoginAttempt(None)
        if wait_ms > 0:
            raise TooManyLoginAttempts(retry_after_seconds=max(1, math.ceil(wait_ms / 1000)))
        return attempt

    def refused(self, address: str | None) -> None:
        """Count a login refused before any password check (a body that is not JSON, text that
        cannot be stored, a missing field) against the client address, like a wrong password:
        malformed guesses must not be free. Raises ``TooManyLoginAttempts`` when the address
        budget is already spent (nothing counted then)."""
        try:
            wait_ms = int(self._begin(
                keys=[self.address_key(address)],
                args=[WINDOW_SECONDS * 1000, ADDRESS_FAILURE_LIMIT, ADDRESS_FAILURE_LIMIT, uuid.uuid4().hex],
            ))
        except redis.RedisError as exc:
            log.warning("login throttle unavailable (%s): refused login attempt not counted", exc)
            return
        if wait_ms > 0:
            raise TooManyLoginAttempts(retry_after_seconds=max(1, math.ceil(wait_ms / 1000)))

    def _forget(self, attempt: LoginAttempt, *, clear_user: bool) -> None:
        try:
            with self.redis.pipeline() as pipe:
                if clear_user:
                    pipe.delete(attempt.user_key)
                else:
                    pipe.zrem(attempt.user_key, attempt.token)
                pipe.zrem(attempt.address_key, attempt.token)
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("login throttle unavailable (%s): attempt left counted as a failure", exc)
