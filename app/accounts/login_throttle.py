"""Failed-login throttle for ``POST /auth/login``, in Redis.

Without it an attacker can guess passwords at bcrypt speed for ever. Before, five wrong
passwords locked a username for 15 minutes from every address: anyone who knew an admin's
username could keep the admin out (issue 28). Now the slowdown falls on the guesser's own
(user, address) pair; what still spans addresses is gentle and spares the addresses the user
really signs in from. Three rules (figures in ``app.limits``, ``LOGIN_*``):

- **per (tenant subdomain, username, client address): growing delays.**
  ``LOGIN_PAIR_FREE_FAILURES`` = 3 failures pass at once (typos, a caps-lock key); each
  further attempt must wait ``LOGIN_PAIR_BASE_DELAY_SECONDS`` = 2 s after the pair's last
  failure, doubled per failure (2, 4, 8 ... s) up to ``LOGIN_PAIR_MAX_DELAY_SECONDS`` = 900 s.
  Failures are remembered ``LOGIN_PAIR_WINDOW_SECONDS`` = 24 h (sliding), so a patient guesser
  settles at the 900 s ceiling: about 100 guesses a day per (user, address), and one
  address's guesses cost no other address anything.
- **per client address: ``LOGIN_ADDRESS_FAILURE_LIMIT`` = 20 failures / 15 min** (sliding),
  whatever the username: the pair rule cannot see *password spraying* (one password against
  many usernames). 20 leaves room for an office behind one NAT address where a few people
  mistype at once. IPv6 clients are counted per /64 (``ADDRESS_IPV6_PREFIX``): one host usually
  owns a whole /64 and could otherwise take a fresh address for every guess.
- **per (tenant, username) across addresses: ``LOGIN_USER_FAILURE_LIMIT`` = 30 failures /
  15 min, except from the user's known addresses** (an address the user signed in from, with
  the right password, within ``LOGIN_KNOWN_ADDRESS_SECONDS`` = 30 days). It bounds a
  distributed guesser (many addresses, each with its own pair delays) to 30 guesses per
  15 min per account, at most 2,880 a day, yet cannot keep the user out where they usually
  sign in: it needs at least two addresses' worth of failures to spend, and it is not applied
  on a known address at all. The price: a user on a *new* address during such an attack waits
  (at most 15 min after the attack stops), as everyone did after 5 failures before.

The username is counted whether or not it exists, alike for every failure (wrong password,
unknown or deactivated user, unknown tenant): the throttle is no user-enumeration oracle. A
known address is recorded only after a verified password, so it tells a guesser nothing.

Why this shape:
- Each count is a sorted set of attempt tokens scored by time (Redis ``TIME``, so API replicas
  with skewed clocks agree; tests inject a clock instead). One Lua script drops entries older
  than their window, refuses when any rule says wait (answering how long: until the pair's
  delay has passed, or until enough counted failures leave a budget's window), and otherwise
  *reserves* a slot in the pair, address and user sets — atomically, so a burst of concurrent
  guesses cannot all pass the check before any of them is recorded.
- The reserved slot IS the failure record: a wrong password needs no second round trip, and an
  attempt whose process dies mid-check still counts. A verified password deletes the pair's
  set, removes only its own slot from the address and user sets (one user's success must not
  forgive the address's failures against others, nor the user's success forgive the failures
  other addresses spent on the account) and marks the address known for the user.
- While a rule says wait the caller answers 429 with ``Retry-After`` **before** looking up the
  user or running bcrypt: no CPU is burnt on a throttled target, and even the correct password
  gets 429, so a throttled attempt is no oracle for which guess was right.

When Redis is unreachable the throttle fails OPEN (logs a warning, admits the attempt without
counting): a cache outage must not lock every user out of the product. The limit is briefly
unenforced instead.

The client address is ``request.remote_addr``. No trusted-proxy setting exists, so
``X-Forwarded-For`` is ignored (trusting it unconditionally would let any client pick the
address it is counted under); behind a reverse proxy every client shares the proxy's address
budget, and its (user, address) pairs, until such a setting is added.
"""
from __future__ import annotations

import hashlib
import ipaddress
import logging
import math
import uuid
from dataclasses import dataclass
from typing import Callable, Optional

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from app import limits
from app.errors import TooManyLoginAttempts
from app.settings import get_settings

log = logging.getLogger(__name__)

WINDOW_SECONDS = limits.LOGIN_WINDOW_SECONDS
PAIR_FREE_FAILURES = limits.LOGIN_PAIR_FREE_FAILURES
PAIR_BASE_DELAY_SECONDS = limits.LOGIN_PAIR_BASE_DELAY_SECONDS
PAIR_MAX_DELAY_SECONDS = limits.LOGIN_PAIR_MAX_DELAY_SECONDS
PAIR_WINDOW_SECONDS = limits.LOGIN_PAIR_WINDOW_SECONDS
ADDRESS_FAILURE_LIMIT = limits.LOGIN_ADDRESS_FAILURE_LIMIT
USER_FAILURE_LIMIT = limits.LOGIN_USER_FAILURE_LIMIT
KNOWN_ADDRESS_SECONDS = limits.LOGIN_KNOWN_ADDRESS_SECONDS
ADDRESS_IPV6_PREFIX = 64
# A login waits for Redis at most this long (one try, one immediate retry) before failing open;
# redis-py's default retry policy backs off for seconds, which every login would pay in an outage.
REDIS_TIMEOUT_SECONDS = 0.5
REDIS_RETRIES = 1

Clock = Callable[[], float]  # seconds since the epoch

# Both scripts start here: ARGV[1] is the caller's clock in ms, or '' for Redis TIME (one clock
# for every API process).
_NOW = """
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
"""

# KEYS: address zset [, user zset, pair zset, known zset].
# ARGV: now ms ('' = Redis TIME), attempt token, window ms, address limit
#       [, user limit, pair free failures, pair base delay ms, pair max delay ms, pair window ms,
#        known ms, address scope].
# With one key only the address budget is checked and spent (a login refused for its input).
# Returns 0 when the attempt is admitted (slot reserved), else ms until it would be.
_BEGIN = _NOW + """
local window = tonumber(ARGV[3])
local wait = 0
local function budget(key, limit)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local n = redis.call('ZCARD', key)
  if n >= limit then
    local edge = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
    local w = tonumber(edge[2]) + window - now
    if w > wait then wait = w end
  end
end
budget(KEYS[1], tonumber(ARGV[4]))
local pair_window = 0
if #KEYS == 4 then
  local known_ms = tonumber(ARGV[10])
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - known_ms)
  if not redis.call('ZSCORE', KEYS[4], ARGV[11]) then
    budget(KEYS[2], tonumber(ARGV[5]))
  else
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  end
  pair_window = tonumber(ARGV[9])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - pair_window)
  local n = redis.call('ZCARD', KEYS[3])
  local free = tonumber(ARGV[6])
  if n >= free then
    local delay = math.min(tonumber(ARGV[7]) * 2 ^ (n - free), tonumber(ARGV[8]))
    local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
    local w = tonumber(last[2]) + delay - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return math.ceil(wait) end
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], window)
if #KEYS == 4 then
  redis.call('ZADD', KEYS[2], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[2], window)
  redis.call('ZADD', KEYS[3], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[3], pair_window)
end
return 0
"""

# KEYS: pair zset, address zset, user zset, known zset. ARGV: now ms ('' = Redis TIME), token,
# address scope, known ms. A verified password: the pair is forgiven, the address known.
_SUCCEEDED = _NOW + """
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZADD', KEYS[4], now, ARGV[3])
redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[4]))
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
    """An admitted attempt. Leave it alone on a wrong password (its slots are the failure
    record); call ``succeeded`` once the password is verified, ``abandoned`` if nothing was
    verified."""

    throttle: "LoginThrottle | None"  # None: Redis was unreachable, nothing was counted
    user_key: str = ""
    address_key: str = ""
    pair_key: str = ""
    known_key: str = ""
    scope: str = ""
    token: str = ""

    def succeeded(self) -> None:
        if self.throttle is not None:
            self.throttle._succeeded(self)

    def abandoned(self) -> None:
        if self.throttle is not None:
            self.throttle._abandoned(self)


class LoginThrottle:
    """See the module docstring for the rules and why they are kept this way. ``clock``
    (seconds since the epoch) replaces Redis ``TIME`` in tests; production leaves it None."""

    def __init__(self, client: redis.Redis | None = None, *, key_prefix: str | None = None,
                 clock: Optional[Clock] = None) -> None:
        settings = get_settings()
        self.redis = client or throttle_client(settings.redis_url)
        self.prefix = (settings.redis_key_prefix if key_prefix is None else key_prefix) + "login:"
        self.clock = clock
        self._begin = self.redis.register_script(_BEGIN)
        self._success = self.redis.register_script(_SUCCEEDED)

    def _now_ms(self) -> str:
        return "" if self.clock is None else str(int(self.clock() * 1000))

    @staticmethod
    def _digest(*parts: str) -> str:
        # hashed: usernames are arbitrary text up to 255 characters; keys stay short and inert
        return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()

    def user_key(self, subdomain: str, username: str) -> str:
        return f"{self.prefix}user:{self._digest(subdomain, username)}"

    def known_key(self, subdomain: str, username: str) -> str:
        return f"{self.prefix}known:{self._digest(subdomain, username)}"

    def pair_key(self, subdomain: str, username: str, address: str | None) -> str:
        return f"{self.prefix}pair:{self._digest(subdomain, username, address_scope(address))}"

    def address_key(self, address: str | None) -> str:
        return f"{self.prefix}addr:{address_scope(address)}"

    def begin(self, subdomain: str, username: str, address: str | None) -> LoginAttempt:
        """Reserve the attempt's slots, or raise ``TooManyLoginAttempts`` (nothing counted)."""
        attempt = LoginAttempt(self, user_key=self.user_key(subdomain, username),
                               address_key=self.address_key(address),
                               pair_key=self.pair_key(subdomain, username, address),
                               known_key=self.known_key(subdomain, username),
                               scope=address_scope(address), token=uuid.uuid4().hex)
        try:
            wait_ms = int(self._begin(
                keys=[attempt.address_key, attempt.user_key, attempt.pair_key, attempt.known_key],
                args=[self._now_ms(), attempt.token, WINDOW_SECONDS * 1000, ADDRESS_FAILURE_LIMIT,
                      USER_FAILURE_LIMIT, PAIR_FREE_FAILURES, PAIR_BASE_DELAY_SECONDS * 1000,
                      PAIR_MAX_DELAY_SECONDS * 1000, PAIR_WINDOW_SECONDS * 1000,
                      KNOWN_ADDRESS_SECONDS * 1000, attempt.scope],
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
                args=[self._now_ms(), uuid.uuid4().hex, WINDOW_SECONDS * 1000, ADDRESS_FAILURE_LIMIT],
            ))
        except redis.RedisError as exc:
            log.warning("login throttle unavailable (%s): refused login attempt not counted", exc)
            return
        if wait_ms > 0:
            raise TooManyLoginAttempts(retry_after_seconds=max(1, math.ceil(wait_ms / 1000)))

    def _succeeded(self, attempt: LoginAttempt) -> None:
        try:
            self._success(keys=[attempt.pair_key, attempt.address_key, attempt.user_key, attempt.known_key],
                          args=[self._now_ms(), attempt.token, attempt.scope, KNOWN_ADDRESS_SECONDS * 1000])
        except redis.RedisError as exc:
            log.warning("login throttle unavailable (%s): attempt left counted as a failure", exc)

    def _abandoned(self, attempt: LoginAttempt) -> None:
        try:
            with self.redis.pipeline() as pipe:
                for key in (attempt.pair_key, attempt.address_key, attempt.user_key):
                    pipe.zrem(key, attempt.token)
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("login throttle unavailable (%s): attempt left counted as a failure", exc)
