"""Shared ACD state in Redis: agent registrations, idle agents, waiting callers, and the
atomic claim that pairs one caller with one agent across every controller.

Keys (under ``settings.redis_key_prefix``):

- ``cc:reg:<domain>:<sip user>`` — the Core-UUID of the switch holding the agent's SIP
  registration, while it is live (TTL = the registration's expiry, from ``sofia::register``;
  deleted on ``sofia::unregister`` / ``sofia::expire``).
- ``cc:<account>:idle`` — sorted set agent id → idle-since (ms): the agents in ``available``
  who are not on a call. Longest idle = lowest score.
- ``cc:<account>:q:<queue name>:waiting`` — sorted set call id → score: priority first
  (higher first), then enqueue time (earlier first).

Redis holds only what is rebuilt from the database and the switch (DESIGN "Data"): state of
record is the ``agents`` table; registrations come back with the phones' next REGISTER.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import redis

# Score of a waiting caller: higher priority first, then earlier enqueue. Enqueue time in ms
# stays below this for the next ~300 years, so priorities never overlap.
PRIORITY_WEIGHT = 10 ** 13
_WAITING_TTL_SECONDS = 24 * 3600
# An agent's "engaged" mark lives this long unless the controller driving the call refreshes
# it (every ENGAGED_REFRESH_SECONDS while the offer or call lasts): a controller that dies
# mid-call leaves the agent un-offerable for at most this long, not forever.
ENGAGED_TTL_SECONDS = 180
ENGAGED_REFRESH_SECONDS = 60

# KEYS[1] the engaged key; ARGV call id, TTL: extend only the mark this call set.
_KEEP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 0
"""

# KEYS[1] waiting callers, KEYS[2] idle agents, KEYS[3..] the candidates' registration keys.
# ARGV[1] the call id, ARGV[2..n-3] the candidate agent ids (same order as their reg keys),
# ARGV[n-2] the caller's switch (Core-UUID; '' = any): only agents registered on it, since the
# offer's user/ dial resolves the contact there; ARGV[n-1] the engaged key's TTL, ARGV[n] the
# engaged-key prefix of the account (the chosen agent is marked engaged).
# The caller must be first in line; the chosen agent is the longest idle registered one.
# Both leave their sets in the same step: no other caller or controller can take either.
_CLAIM = """
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] ~= ARGV[1] then return false end
local best, best_score = nil, nil
for i = 2, #ARGV - 3 do
  local score = redis.call('ZSCORE', KEYS[2], ARGV[i])
  if score then
    score = tonumber(score)
    if best_score == nil or score < best_score then
      local node = redis.call('GET', KEYS[i + 1])
      if node and (ARGV[#ARGV - 2] == '' or node == ARGV[#ARGV - 2]) then
        best, best_score = ARGV[i], score
      end
    end
  end
end
if best == nil then return false end
redis.call('SET', ARGV[#ARGV] .. best, ARGV[1], 'EX', tonumber(ARGV[#ARGV - 1]))
redis.call('ZREM', KEYS[2], best)
redis.call('ZREM', KEYS[1], ARGV[1])
return best
"""


# KEYS[1] idle agents, KEYS[2] the agent's engaged key; ARGV agent id, idle-since ms.
_IDLE = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Candidate:
    """A queue member that may be offered a call: its id and its SIP registration."""

    agent_id: str
    domain: str
    sip_username: str


class Presence:
    def __init__(self, client: "redis.Redis", prefix: str) -> None:
        self.redis = client
        self.prefix = prefix
        self._claim = client.register_script(_CLAIM)
        self._idle = client.register_script(_IDLE)
        self._keep = client.register_script(_KEEP)

    # -- keys --------------------------------------------------------------------------------
    def reg_key(self, domain: str, sip_username: str) -> str:
        return f"{self.prefix}cc:reg:{domain.lower()}:{sip_username}"

    def idle_key(self, account_id: str) -> str:
        return f"{self.prefix}cc:{account_id}:idle"

    def engaged_prefix(self, account_id: str) -> str:
        return f"{self.prefix}cc:{account_id}:engaged:"

    def waiting_key(self, account_id: str, queue: str) -> str:
        return f"{self.prefix}cc:{account_id}:q:{queue}:waiting"

    # -- registrations -------------------------------------------------------------------------
    def registered(self, domain: str, sip_username: str, expires_seconds: int, node: str = "") -> None:
        """``node``: the Core-UUID of the switch the agent registered on."""
        self.redis.set(self.reg_key(domain, sip_username), node or "-", ex=max(1, int(expires_seconds)))

    def unregistered(self, domain: str, sip_username: str) -> None:
        self.redis.delete(self.reg_key(domain, sip_username))

    def is_registered(self, domain: str, sip_username: str) -> bool:
        return bool(self.redis.exists(self.reg_key(domain, sip_username)))

    # -- agents ----------------------------------------------------------------------------------
    def agent_idle(self, account_id: str, agent_id: str, since_ms: Optional[int] = None) -> bool:
        """The agent may be offered calls; ``since_ms`` orders longest idle (default now).
        Not while the agent is engaged (offered or on a call): returns False then."""
        keys = [self.idle_key(account_id), self.engaged_prefix(account_id) + agent_id]
        return bool(self._idle(keys=keys, args=[agent_id, since_ms if since_ms is not None else _now_ms()]))

    def engaged_by(self, account_id: str, agent_id: str) -> Optional[str]:
        """The call the agent is offered or talking to, if any."""
        value = self.redis.get(self.engaged_prefix(account_id) + agent_id)
        return value.decode() if isinstance(value, bytes) else value

    def keep_engaged(self, account_id: str, agent_id: str, call_id: str) -> bool:
        """Extend the agent's engaged mark while ``call_id`` still holds it."""
        return bool(self._keep(keys=[self.engaged_prefix(account_id) + agent_id],
                               args=[call_id, ENGAGED_TTL_SECONDS]))

    def release(self, account_id: str, agent_id: str) -> None:
        """The offer or call is over (the agent's next state decides if it is idle again)."""
        self.redis.delete(self.engaged_prefix(account_id) + agent_id)

    def count_miss(self, account_id: str, agent_id: str) -> int:
        """Consecutive missed offers of the agent (reset by an accepted offer)."""
        key = f"{self.prefix}cc:{account_id}:misses:{agent_id}"
        pipe = self.redis.pipeline()
        pipe.incr(key)
        pipe.expire(key, _WAITING_TTL_SECONDS)
        return int(pipe.execute()[0])

    def reset_misses(self, account_id: str, agent_id: str) -> None:
        self.redis.delete(f"{self.prefix}cc:{account_id}:misses:{agent_id}")

    def agent_busy(self, account_id: str, agent_id: str) -> None:
        """Not offerable (not available, or on a call)."""
        self.redis.zrem(self.idle_key(account_id), agent_id)

    def idle_agents(self, account_id: str) -> list[str]:
        return [m.decode() if isinstance(m, bytes) else m
                for m in self.redis.zrange(self.idle_key(account_id), 0, -1)]

    # -- callers -------------------------------------------------------------------------------
    def join(self, account_id: str, queue: str, call_id: str, *, priority: int = 0,
             enqueued_ms: Optional[int] = None) -> float:
        """Put the caller in line; returns its score (to rejoin in place after a missed offer)."""
        score = float(-priority * PRIORITY_WEIGHT + (enqueued_ms if enqueued_ms is not None else _now_ms()))
        key = self.waiting_key(account_id, queue)
        pipe = self.redis.pipeline()
        pipe.zadd(key, {call_id: score})
        pipe.expire(key, _WAITING_TTL_SECONDS)
        pipe.execute()
        return score

    def rejoin(self, account_id: str, queue: str, call_id: str, score: float) -> None:
        self.redis.zadd(self.waiting_key(account_id, queue), {call_id: score})

    def leave(self, account_id: str, queue: str, call_id: str) -> None:
        self.redis.zrem(self.waiting_key(account_id, queue), call_id)

    def position(self, account_id: str, queue: str, call_id: str) -> Optional[int]:
        rank = self.redis.zrank(self.waiting_key(account_id, queue), call_id)
        return None if rank is None else int(rank) + 1

    def waiting(self, account_id: str, queue: str) -> int:
        return int(self.redis.zcard(self.waiting_key(account_id, queue)))

    # -- the claim -----------------------------------------------------------------------------
    def claim(self, account_id: str, queue: str, call_id: str, candidates: Sequence[Candidate],
              node: str = "") -> Optional[str]:
        """Atomically: if ``call_id`` is first in line and a candidate is idle and registered
        (on switch ``node`` when given), take both out (the longest idle agent); returns that
        agent id, else None."""
        if not candidates:
            return None
        keys = [self.waiting_key(account_id, queue), self.idle_key(account_id),
                *(self.reg_key(c.domain, c.sip_username) for c in candidates)]
        chosen = self._claim(keys=keys, args=[call_id, *(c.agent_id for c in candidates), node,
                                              ENGAGED_TTL_SECONDS, self.engaged_prefix(account_id)])
        if not chosen:
            return None
        return chosen.decode() if isinstance(chosen, bytes) else str(chosen)
