"""Concurrent-call limiter per account and per service provider, in Redis, leak-proof.

Why this shape:
- One sorted set per scope (account, service provider) holds the call ids admitted, scored by
  the time their slot expires. A Lua script drops expired members, checks both scopes against
  their limits and adds the call to both or to neither, atomically: two controllers admitting
  calls at the same instant can never overshoot ``maxConcurrentCalls``.
- A controller refreshes the slots of its live calls every ``LIMITER_REFRESH_SECONDS``; if it
  dies, nobody refreshes them and they expire after ``LIMITER_SLOT_TTL_SECONDS``. No counter can
  leak, unlike INCR/DECR counters that miss their DECR when a process is killed.
- Time comes from the Redis server (``TIME``), so controllers with skewed clocks agree.
- A per-call key remembers which scopes the call holds, so ``release``/``refresh`` need only
  the call id. The script touches keys it derives from that value, so this needs a single Redis
  (or one hash slot), not Redis Cluster — the deployment has one Redis.

When Redis is unreachable the limiter fails OPEN: ``acquire`` admits the call with
``Admission.degraded`` set, ``refresh`` returns nothing. A Redis outage must not turn every call
away; the limit is briefly unenforced instead. The outage is logged once when it starts and
once, with its duration, when it ends (``app.calls.outage``) — not once per call. Releases
that fail are kept and **replayed** as soon as Redis answers again (a probe greenlet pings it
with backoff), so calls that ended during the outage do not hold slots until the TTL if Redis
kept its data; calls admitted during the outage and still live are counted then (without a
limit check: they are already up).

A refused call is answered ``503 Service Unavailable``: the session hangs up the (unanswered)
channel with ``REFUSAL_HANGUP_CAUSE`` = NORMAL_CIRCUIT_CONGESTION (Q.850 34), which FreeSWITCH's
mod_sofia maps to SIP 503; carriers then fail over instead of treating the number as gone.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import gevent
import redis

from app import limits
from app.calls.outage import Outage
from app.ops.metrics import LIMITER_REFUSALS
from app.settings import get_settings

log = logging.getLogger(__name__)

REFUSAL_HANGUP_CAUSE = "NORMAL_CIRCUIT_CONGESTION"
REFUSAL_Q850 = 34
REFUSAL_SIP_STATUS = 503

# Releases held while Redis is away (a few bytes each); past this the oldest are left to the TTL.
MAX_HELD_RELEASES = 100_000
PROBE_INITIAL_SECONDS = 0.25
PROBE_MAX_SECONDS = 2.0  # a ping every 2 s while Redis is away: releases replay soon after
REPLAY_CHUNK = 500
FAIL_OPEN = "admitting calls without a limit, holding slot releases"

SCOPE_ACCOUNT = "account"
SCOPE_SERVICE_PROVIDER = "service_provider"

# KEYS: account zset, service-provider zset ('' when none), call key
# ARGV: call id, ttl ms, account limit, sp limit, call-key value
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
local expiry = now + ttl
local has_sp = KEYS[2] ~= ''
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local acct = redis.call('ZCARD', KEYS[1])
local sp = 0
if has_sp then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  sp = redis.call('ZCARD', KEYS[2])
end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local alim = tonumber(ARGV[3])
  if alim > 0 and acct >= alim then return {0, 'account', acct, sp} end
  local slim = tonumber(ARGV[4])
  if has_sp and slim > 0 and sp >= slim then return {0, 'service_provider', acct, sp} end
  acct = acct + 1
  if has_sp then sp = sp + 1 end
end
redis.call('ZADD', KEYS[1], expiry, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
if has_sp then
  redis.call('ZADD', KEYS[2], expiry, ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ttl)
end
redis.call('SET', KEYS[3], ARGV[5], 'PX', ttl)
return {1, '', acct, sp}
"""

# KEYS: call keys. ARGV: call ids (same order). Returns how many calls were released.
_RELEASE = """
local released = 0
for i, key in ipairs(KEYS) do
  local scopes = redis.call('GET', key)
  if scopes then
    for scope in string.gmatch(scopes, '[^\\n]+') do
      redis.call('ZREM', scope, ARGV[i])
    end
    redis.call('DEL', key)
    released = released + 1
  end
end
return released
"""

# KEYS: call keys. ARGV[1]: ttl ms, ARGV[2..]: call ids. Returns the ids no longer held.
# A call whose slot already expired in any scope is removed from all (both or neither).
_REFRESH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local lost = {}
for i, key in ipairs(KEYS) do
  local id = ARGV[i + 1]
  local scopes = redis.call('GET', key)
  local held = scopes ~= false
  local list = {}
  if held then
    for scope in string.gmatch(scopes, '[^\\n]+') do
      table.insert(list, scope)
      local score = redis.call('ZSCORE', scope, id)
      if not score or tonumber(score) <= now then held = false end
    end
  end
  if held then
    for _, scope in ipairs(list) do
      redis.call('ZADD', scope, now + ttl, id)
      redis.call('PEXPIRE', scope, ttl)
    end
    redis.call('PEXPIRE', key, ttl)
  else
    for _, scope in ipairs(list) do redis.call('ZREM', scope, id) end
    redis.call('DEL', key)
    table.insert(lost, id)
  end
end
return lost
"""

# KEYS: scope zsets. Returns live counts after dropping expired members.
_COUNT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  table.insert(out, redis.call('ZCARD', key))
end
return out
"""


@dataclass(frozen=True)
class Admission:
    """The limiter's answer; counts include this call when admitted."""
    admitted: bool
    refused_scope: str | None  # SCOPE_ACCOUNT | SCOPE_SERVICE_PROVIDER | None
    account_count: int
    service_provider_count: int
    degraded: bool = False  # Redis unreachable: admitted without counting (fail open)

    @property
    def sip_status(self) -> int | None:
        return None if self.admitted else REFUSAL_SIP_STATUS

    @property
    def hangup_cause(self) -> str | None:
        return None if self.admitted else REFUSAL_HANGUP_CAUSE


class ConcurrencyLimiter:
    """Admission control for concurrent calls; see the module docstring for the design."""

    def __init__(
        self,
        client: redis.Redis | None = None,
        *,
        key_prefix: str | None = None,
        slot_ttl_seconds: float = limits.LIMITER_SLOT_TTL_SECONDS,
    ) -> None:
        settings = get_settings()
        self.redis = client or redis.Redis.from_url(settings.redis_url)
        self.prefix = (settings.redis_key_prefix if key_prefix is None else key_prefix) + "limiter:"
        self.ttl_ms = int(slot_ttl_seconds * 1000)
        self._acquire = self.redis.register_script(_ACQUIRE)
        self._release = self.redis.register_script(_RELEASE)
        self._refresh = self.redis.register_script(_REFRESH)
        self._count = self.redis.register_script(_COUNT)
        self.outage = Outage("concurrency limiter (Redis)", log)
        self._held_releases: dict[str, None] = {}       # call ids, oldest first
        self._uncounted: dict[str, tuple[Any, Any]] = {}  # admitted while down: account, sp
        self._probe: gevent.Greenlet | None = None
        self.replayed = 0

    # keys -------------------------------------------------------------------------------
    def account_key(self, account_id: object) -> str:
        return f"{self.prefix}account:{account_id}"

    def service_provider_key(self, sp_id: object) -> str:
        return f"{self.prefix}sp:{sp_id}"

    def call_key(self, call_id: object) -> str:
        return f"{self.prefix}call:{call_id}"

    # operations -------------------------------------------------------------------------
    def acquire(
        self,
        call_id: object,
        account_id: object,
        account_limit: int,
        sp_id: object | None = None,
        sp_limit: int = limits.UNLIMITED_CONCURRENT_CALLS,
    ) -> Admission:
        """Admit ``call_id`` into both scopes or neither. A limit of 0 means unlimited (the call
        is still counted). Acquiring an already admitted call refreshes it and is admitted."""
        if account_limit < 0 or sp_limit < 0:
            raise ValueError("limits must be >= 0 (0 = unlimited)")
        acct_key = self.account_key(account_id)
        sp_key = self.service_provider_key(sp_id) if sp_id is not None else ""
        scopes = acct_key if not sp_key else f"{acct_key}\n{sp_key}"
        if self.outage.down:  # the probe finds out when it is back; calls do not wait on it
            self.outage.failures += 1
            self._uncounted[str(call_id)] = (account_id, sp_id)
            return Admission(True, None, -1, -1, degraded=True)
        try:
            admitted, scope, acct, sp = self._acquire(
                keys=[acct_key, sp_key, self.call_key(call_id)],
                args=[str(call_id), self.ttl_ms, int(account_limit), int(sp_limit), scopes],
            )
        except redis.RedisError as exc:
            self._unavailable(exc)
            self._uncounted[str(call_id)] = (account_id, sp_id)
            return Admission(True, None, -1, -1, degraded=True)
        refused = scope.decode() if isinstance(scope, bytes) else scope
        if not admitted:
            LIMITER_REFUSALS.labels(refused).inc()
        return Admission(bool(admitted), refused or None, int(acct), int(sp))

    def holding(self, call_ids: list[str]) -> set[str]:
        """The calls among ``call_ids`` that hold a slot — admitted by some controller and not
        released. One round trip (pipelined EXISTS)."""
        if not call_ids:
            return set()
        pipe = self.redis.pipeline(transaction=False)
        for call_id in call_ids:
            pipe.exists(self.call_key(call_id))
        return {call_id for call_id, held in zip(call_ids, pipe.execute()) if held}

    def release(self, *call_ids: object) -> int:
        """Free the slots of these calls (idempotent); returns how many were held."""
        if not call_ids:
            return 0
        ids = [str(c) for c in call_ids]
        if self.outage.down:  # replayed in order once Redis is back
            self._hold_releases(ids)
            return 0
        try:
            return int(self._release(keys=[self.call_key(c) for c in ids], args=ids))
        except redis.RedisError as exc:
            self._unavailable(exc)
            self._hold_releases(ids)
            return 0

    def refresh(self, call_ids: Iterable[object]) -> list[str]:
        """Push the expiry of live calls forward; returns ids whose slot was already gone
        (expired because refreshes stopped for longer than the TTL, or released)."""
        ids = [str(c) for c in call_ids if str(c) not in self._uncounted]
        if not ids or self.outage.down:
            return []
        try:
            lost = self._refresh(keys=[self.call_key(c) for c in ids], args=[self.ttl_ms, *ids])
        except redis.RedisError as exc:
            self._unavailable(exc)
            return []
        return [x.decode() if isinstance(x, bytes) else x for x in lost]

    # outage handling --------------------------------------------------------------------
    def _unavailable(self, error: BaseException) -> None:
        self.outage.failed(error, FAIL_OPEN)
        if self._probe is None or self._probe.dead:
            self._probe = gevent.spawn(self._probe_until_back)

    def _hold_releases(self, ids: list[str]) -> None:
        for call_id in ids:
            if self._uncounted.pop(call_id, None) is not None:
                continue  # admitted while down: it never had a slot
            if len(self._held_releases) >= MAX_HELD_RELEASES:
                self._held_releases.pop(next(iter(self._held_releases)))  # left to the TTL
            self._held_releases[call_id] = None

    def _probe_until_back(self) -> None:
        delay = PROBE_INITIAL_SECONDS
        while True:
            gevent.sleep(delay)
            delay = min(delay * 2, PROBE_MAX_SECONDS)
            try:
                self.redis.ping()
                released, counted = self._replay()
            except redis.RedisError as exc:
                self.outage.failures += 1
                log.debug("limiter probe: Redis still unavailable (%s)", exc)
                continue
            self.outage.recovered(f"{released} held release(s) replayed, {counted} call(s) "
                                  f"admitted meanwhile now counted")
            return

    def _replay(self) -> tuple[int, int]:
        """Replay held releases (oldest first), then count the calls admitted while Redis
        was away that are still up. Raises RedisError when Redis drops again (kept for later)."""
        released = counted = 0
        # a call may end (or start) while this yields to Redis: loop until nothing is left
        while self._held_releases or self._uncounted:
            if self._held_releases:
                chunk = list(self._held_releases)[:REPLAY_CHUNK]
                self._release(keys=[self.call_key(c) for c in chunk], args=chunk)
                for call_id in chunk:
                    self._held_releases.pop(call_id, None)
                released += len(chunk)
                self.replayed += len(chunk)
                continue
            call_id, (account_id, sp_id) = next(iter(self._uncounted.items()))
            # popped first: if it ends while we count it, its release is held and replayed
            del self._uncounted[call_id]
            acct_key = self.account_key(account_id)
            sp_key = self.service_provider_key(sp_id) if sp_id is not None else ""
            try:
                self._acquire(keys=[acct_key, sp_key, self.call_key(call_id)],
                              args=[call_id, self.ttl_ms, 0, 0,
                                    acct_key if not sp_key else f"{acct_key}\n{sp_key}"])
            except redis.RedisError:
                self._uncounted[call_id] = (account_id, sp_id)
                raise
            counted += 1
        return released, counted

    def counts(self, account_id: object, sp_id: object | None = None) -> tuple[int, int]:
        """Live (unexpired) calls of the account and of the service provider."""
        keys = [self.account_key(account_id)]
        if sp_id is not None:
            keys.append(self.service_provider_key(sp_id))
        out = [int(x) for x in self._count(keys=keys, args=[])]
        return out[0], (out[1] if sp_id is not None else 0)


def holds_call(client: redis.Redis, account_id: object, call_id: object,
               key_prefix: str | None = None) -> bool:
    """Whether ``call_id`` is a live call of ``account_id``: its slot is in the account's scope
    (the API asks, e.g. to tell a live call without an agent from an unknown one)."""
    prefix = (get_settings().redis_key_prefix if key_prefix is None else key_prefix) + "limiter:"
    return client.zscore(f"{prefix}account:{account_id}", str(call_id)) is not None


def start_refresher(
    limiter: ConcurrencyLimiter,
    live_call_ids: Callable[[], Iterable[object]],
    interval_seconds: float = limits.LIMITER_REFRESH_SECONDS,
    on_lost: Callable[[list[str]], None] | None = None,
) -> gevent.Greenlet:
    """The controller's heartbeat for its calls' slots; kill the greenlet to stop it."""

    def loop() -> None:
        while True:
            gevent.sleep(interval_seconds)
            lost = limiter.refresh(list(live_call_ids()))  # empty while Redis is away
            if lost:
                log.warning("limiter slots already expired for %d live calls", len(lost))
                if on_lost:
                    on_lost(lost)

    return gevent.spawn(loop)
