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
- ``cc:<account>:q:<queue name>:rr`` — round_robin: the agent id offered last.
- ``cc:<account>:handled:<YYYYMMDD>`` — hash agent id → calls answered that UTC day
  (fewest_calls), kept two days.
- ``cc:nodes`` — hash Core-UUID → ``host:port`` of that switch's agent profile (cross-node
  offers: a caller on one node is offered an agent registered on another).

Redis holds only what is rebuilt from the database and the switch (DESIGN "Data"): state of
record is the ``agents`` table; registrations come back with the phones' next REGISTER.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Optional, Sequence

from app import limits
from app.models.enums import QUEUE_STRATEGIES

if TYPE_CHECKING:  # pragma: no cover
    import redis

# Score of a waiting caller: higher priority first, then earlier enqueue. Enqueue time in ms
# stays below this for the next ~300 years, so priorities never overlap.
PRIORITY_WEIGHT = 10 ** 13
_WAITING_TTL_SECONDS = 24 * 3600
# today's calls-handled hash outlives midnight by a day (read only for today)
_HANDLED_TTL_SECONDS = 2 * 24 * 3600
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

# KEYS[1] the agent's engaged mark, KEYS[2] its leg key, KEYS[3] the consultation's mark;
# ARGV: consulted leg, call id, engaged TTL, leg TTL. Only while the consulted leg holds the agent.
_HAND_OVER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
  redis.call('SET', KEYS[2], ARGV[2] .. ' ' .. ARGV[1], 'EX', tonumber(ARGV[4]))
  redis.call('DEL', KEYS[3])
  return 1
end
return 0
"""

# KEYS[1] waiting callers, KEYS[2] idle agents, KEYS[3] the queue's round-robin pointer,
# KEYS[4] today's calls-handled hash of the account, KEYS[5..] the candidates' registration keys.
# ARGV[1] the call id, ARGV[2] the switches (Core-UUIDs, ','-separated; '' = any) whose agents
# may be offered: the caller's own (user/ resolves the contact there) and the cluster peers it
# can reach (cross-node offer, ``node_addresses``); ARGV[3] the
# engaged key's TTL, ARGV[4] the engaged-key prefix of the account; ARGV[5] the strategy,
# ARGV[6] ring_all's most legs; ARGV[7..] (agent id, tier) per candidate, same order as the
# registration keys.
# The first caller in line takes the best agent; the caller at place k (0-based) takes the
# k-th in the same order when that many are idle and registered (a burst of idle agents is
# served in one claim round, each caller still getting the agent its place gives it);
# ring_all serves only the first caller. Among the idle registered candidates of the lowest tier:
# longest_idle = lowest idle-since; fewest_calls = fewest handled today, then longest idle;
# round_robin = the next agent id after the pointer (wrapping); ring_all = all of them
# (longest idle first, at most ARGV[6]). The chosen agents leave the idle set and are marked
# engaged, the caller leaves the line, all in the same step: no other caller or controller can
# take any of them. Returns {agent, idle-since, ...} or false.
_CLAIM = """
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then return false end
local node, strategy = ARGV[2], ARGV[5]
local allowed = {}
for n in string.gmatch(node, '[^,]+') do allowed[n] = true end
if rank > 0 and (strategy == 'ring_all' or rank >= redis.call('ZCARD', KEYS[2])) then return false end
local pointer = false
if strategy == 'round_robin' then pointer = redis.call('GET', KEYS[3]) end
-- the strategy's order within a tier: (k1, k2) ascending
local function order(agent, score)
  if strategy == 'fewest_calls' then
    return tonumber(redis.call('HGET', KEYS[4], agent) or '0'), tonumber(score)
  elseif strategy == 'round_robin' then
    return ((pointer and agent <= pointer) and 1 or 0), agent
  end
  return tonumber(score), ''
end
if rank > 0 then
  -- caller k in line takes the k-th agent in the strategy's order (lowest tier first)
  local all = {}
  for i = 1, (#ARGV - 6) / 2 do
    local agent, tier = ARGV[5 + 2 * i], tonumber(ARGV[6 + 2 * i])
    local score = redis.call('ZSCORE', KEYS[2], agent)
    if score then
      local reg = redis.call('GET', KEYS[4 + i])
      if reg and (node == '' or allowed[reg]) then
        local k1, k2 = order(agent, score)
        all[#all + 1] = {tier, k1, k2, agent, score}
      end
    end
  end
  if #all <= rank then return false end
  table.sort(all, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    if a[2] ~= b[2] then return a[2] < b[2] end
    return a[3] < b[3]
  end)
  local pick = all[rank + 1]
  redis.call('SET', ARGV[4] .. pick[4], ARGV[1], 'EX', tonumber(ARGV[3]))
  redis.call('ZREM', KEYS[2], pick[4])
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {pick[4], pick[5]}
end
local best_tier, best, best_score, key1, key2 = nil, nil, nil, nil, nil
local ring = {}
for i = 1, (#ARGV - 6) / 2 do
  local agent, tier = ARGV[5 + 2 * i], tonumber(ARGV[6 + 2 * i])
  if best_tier == nil or tier <= best_tier then
    local score = redis.call('ZSCORE', KEYS[2], agent)
    if score then
      local lower = best_tier == nil or tier < best_tier
      local k1, k2 = order(agent, score)
      -- the registration is read only for a candidate that would be chosen (or rung)
      if lower or strategy == 'ring_all' or best == nil or k1 < key1 or (k1 == key1 and k2 < key2) then
        local reg = redis.call('GET', KEYS[4 + i])
        if reg and (node == '' or allowed[reg]) then
          if lower then
            best_tier, best, ring = tier, nil, {}
          end
          if strategy == 'ring_all' then
            ring[#ring + 1] = {agent, score}
          else
            best, best_score, key1, key2 = agent, score, k1, k2
          end
        end
      end
    end
  end
end
if best ~= nil then ring = {{best, best_score}} end
if #ring == 0 then return false end
table.sort(ring, function(a, b) return tonumber(a[2]) < tonumber(b[2]) end)
local out = {}
for i = 1, math.min(#ring, tonumber(ARGV[6])) do
  local agent = ring[i][1]
  redis.call('SET', ARGV[4] .. agent, ARGV[1], 'EX', tonumber(ARGV[3]))
  redis.call('ZREM', KEYS[2], agent)
  out[#out + 1] = agent
  out[#out + 1] = ring[i][2]
end
redis.call('ZREM', KEYS[1], ARGV[1])
if strategy == 'round_robin' then redis.call('SET', KEYS[3], best, 'EX', 86400) end
return out
"""


# KEYS[1] idle agents, KEYS[2] the agent's engaged key; ARGV agent id, idle-since ms.
_IDLE = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""

# The callback dispatcher's claim of one agent (app/contact/callbacks.py). KEYS[1] idle agents,
# KEYS[2] the agent's engaged key, KEYS[3] its registration key ('' = an agent reached by its
# contact, no registration to check), KEYS[4] the callback-call key. ARGV agent id, call id,
# engaged TTL, callback-call TTL. The agent must be idle, not engaged and registered; it leaves
# the idle set and is marked engaged by the call in one step (a queue caller's claim and a
# callback never get the same agent). Returns its idle-since score (to undo in place).
_CLAIM_AGENT = """
local since = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not since then return false end
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
if KEYS[3] ~= '' and redis.call('EXISTS', KEYS[3]) == 0 then return false end
redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[3]))
redis.call('SET', KEYS[4], ARGV[1], 'EX', tonumber(ARGV[4]))
redis.call('ZREM', KEYS[1], ARGV[1])
return since
"""

# KEYS[1] the agent's engaged key, KEYS[2] idle agents (or '' to leave it), KEYS[3] the
# callback-call key; ARGV call id, agent id, idle-since. Only the mark this call set is removed.
_UNCLAIM_AGENT = """
redis.call('DEL', KEYS[3])
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if KEYS[2] ~= '' then redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2]) end
return 1
"""


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Candidate:
    """A queue member that may be offered a call: its id, its SIP registration and its tier
    in the queue (lower tiers are offered first)."""

    agent_id: str
    domain: str
    sip_username: str
    tier: int = 1


@dataclass(frozen=True)
class Claimed:
    """An agent taken by a claim, with its idle-since (ms) to give its place back (ring_all)."""

    agent_id: str
    idle_since_ms: int


# Strategy name → the Lua claim's selector. Explicit: a queue's strategy column is checked
# against this before it reaches the script.
STRATEGIES = frozenset(QUEUE_STRATEGIES)
DEFAULT_STRATEGY = "longest_idle"


class Presence:
    def __init__(self, client: "redis.Redis", prefix: str) -> None:
        self.redis = client
        self.prefix = prefix
        self._claim = client.register_script(_CLAIM)
        self._idle = client.register_script(_IDLE)
        self._keep = client.register_script(_KEEP)
        self._claim_agent = client.register_script(_CLAIM_AGENT)
        self._unclaim_agent = client.register_script(_UNCLAIM_AGENT)
        self._hand_over = client.register_script(_HAND_OVER)

    # -- keys --------------------------------------------------------------------------------
    def reg_key(self, domain: str, sip_username: str) -> str:
        return f"{self.prefix}cc:reg:{domain.lower()}:{sip_username}"

    def idle_key(self, account_id: str) -> str:
        return f"{self.prefix}cc:{account_id}:idle"

    def engaged_prefix(self, account_id: str) -> str:
        return f"{self.prefix}cc:{account_id}:engaged:"

    def waiting_key(self, account_id: str, queue: str) -> str:
        return f"{self.prefix}cc:{account_id}:q:{queue}:waiting"

    def pointer_key(self, account_id: str, queue: str) -> str:
        return f"{self.prefix}cc:{account_id}:q:{queue}:rr"

    def handled_key(self, account_id: str, day: Optional[str] = None) -> str:
        """Calls answered per agent on a UTC day (default today)."""
        day = day or datetime.now(timezone.utc).strftime("%Y%m%d")
        return f"{self.prefix}cc:{account_id}:handled:{day}"

    # -- registrations -------------------------------------------------------------------------
    def registered(self, domain: str, sip_username: str, expires_seconds: int, node: str = "") -> None:
        """``node``: the Core-UUID of the switch the agent registered on."""
        self.redis.set(self.reg_key(domain, sip_username), node or "-", ex=max(1, int(expires_seconds)))

    def registered_on(self, domain: str, sip_username: str) -> Optional[str]:
        """The Core-UUID of the switch holding the agent's registration ('-' = unknown)."""
        value = self.redis.get(self.reg_key(domain, sip_username))
        return value.decode() if isinstance(value, bytes) else value

    # -- cluster nodes (cross-node offers) -------------------------------------------------------
    def nodes_key(self) -> str:
        return f"{self.prefix}cc:nodes"

    def node_seen(self, core_uuid: str, agent_sip_address: str) -> None:
        """Switch ``core_uuid`` takes cross-node offers at ``host:port`` (its agent profile).
        One field per switch start (a restarted switch has a new Core-UUID; the old field
        maps to the same address and is never read again once its registrations expire)."""
        if core_uuid:
            self.redis.hset(self.nodes_key(), core_uuid, agent_sip_address)

    def node_addresses(self) -> dict[str, str]:
        """Core-UUID → agent-profile ``host:port`` of every switch the controllers know."""
        return {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
                for k, v in self.redis.hgetall(self.nodes_key()).items()}

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
        self.redis.delete(self.engaged_prefix(account_id) + agent_id, self.leg_key(account_id, agent_id))

    # -- the agent's own leg (the agent channel's reject/hangup/hold/dtmf act on it) ------------
    def leg_key(self, account_id: str, agent_id: str) -> str:
        return f"{self.prefix}cc:{account_id}:leg:{agent_id}"

    def set_agent_leg(self, account_id: str, agent_id: str, call_id: str, leg_id: str) -> None:
        """The agent's leg of ``call_id`` (its ``origination_uuid``); removed by ``release``."""
        self.redis.set(self.leg_key(account_id, agent_id), f"{call_id} {leg_id}", ex=_WAITING_TTL_SECONDS)

    def agent_leg(self, account_id: str, agent_id: str) -> Optional[tuple[str, str]]:
        """(call id, leg id) of the agent's leg, while the agent is still engaged with that call
        (a leftover key of an older call is never acted on)."""
        engaged, leg = self.redis.mget(self.engaged_prefix(account_id) + agent_id,
                                       self.leg_key(account_id, agent_id))
        if not engaged or not leg:
            return None
        engaged = engaged.decode() if isinstance(engaged, bytes) else engaged
        call_id, _, leg_id = (leg.decode() if isinstance(leg, bytes) else leg).partition(" ")
        return (call_id, leg_id) if call_id == engaged and leg_id else None

    def count_miss(self, account_id: str, agent_id: str) -> int:
        """Consecutive missed offers of the agent (reset by an accepted offer)."""
        key = f"{self.prefix}cc:{account_id}:misses:{agent_id}"
        pipe = self.redis.pipeline()
        pipe.incr(key)
        pipe.expire(key, _WAITING_TTL_SECONDS)
        return int(pipe.execute()[0])

    def reset_misses(self, account_id: str, agent_id: str) -> None:
        self.redis.delete(f"{self.prefix}cc:{account_id}:misses:{agent_id}")

    def count_handled(self, account_id: str, agent_id: str) -> int:
        """One more call answered by the agent today (UTC): the fewest_calls order."""
        key = self.handled_key(account_id)
        pipe = self.redis.pipeline()
        pipe.hincrby(key, agent_id, 1)
        pipe.expire(key, _HANDLED_TTL_SECONDS)
        return int(pipe.execute()[0])

    def handled_today(self, account_id: str, agent_id: str) -> int:
        return int(self.redis.hget(self.handled_key(account_id), agent_id) or 0)

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
              node: str = "", strategy: str = DEFAULT_STRATEGY) -> Optional[str]:
        """The one agent claimed for ``call_id`` (see ``claim_agents``), or None."""
        claimed = self.claim_agents(account_id, queue, call_id, candidates, node, strategy)
        return claimed[0].agent_id if claimed else None

    def claim_agents(self, account_id: str, queue: str, call_id: str, candidates: Sequence[Candidate],
                     node: str = "", strategy: str = DEFAULT_STRATEGY) -> list[Claimed]:
        """Atomically: if ``call_id`` is first in line and candidates of the queue are idle
        and registered (on a switch of ``node``, ','-separated Core-UUIDs, when given), take the caller out of the line and
        the agent(s) the strategy picks in the lowest tier out of the idle set (marked
        engaged): one agent, or for ``ring_all`` every such agent up to
        QUEUE_RING_ALL_MAX_LEGS, longest idle first. Empty when nothing was claimed."""
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown queue strategy {strategy!r}")
        if not candidates:
            return []
        keys = [self.waiting_key(account_id, queue), self.idle_key(account_id),
                self.pointer_key(account_id, queue), self.handled_key(account_id),
                *(self.reg_key(c.domain, c.sip_username) for c in candidates)]
        args: list[object] = [call_id, node, ENGAGED_TTL_SECONDS, self.engaged_prefix(account_id),
                              strategy, limits.QUEUE_RING_ALL_MAX_LEGS]
        for c in candidates:
            args += [c.agent_id, c.tier]
        flat = self._claim(keys=keys, args=args)
        if not flat:
            return []
        text = [v.decode() if isinstance(v, bytes) else str(v) for v in flat]
        return [Claimed(text[i], int(float(text[i + 1]))) for i in range(0, len(text), 2)]

    # -- callbacks (app/contact/callbacks.py) -------------------------------------------------
    def callback_call_key(self, account_id: str, call_id: str) -> str:
        return f"{self.prefix}cc:{account_id}:cbcall:{call_id}"

    def claim_agent(self, account_id: str, agent_id: str, call_id: str,
                    registration: Optional[tuple[str, str]], call_ttl_seconds: int,
                    engaged_ttl_seconds: int = ENGAGED_TTL_SECONDS) -> Optional[int]:
        """Atomically take one idle agent for the callback call ``call_id`` (registered, when
        ``registration`` = (domain, sip user) is given); returns its idle-since ms, else None."""
        keys = [self.idle_key(account_id), self.engaged_prefix(account_id) + agent_id,
                self.reg_key(*registration) if registration else "",
                self.callback_call_key(account_id, call_id)]
        since = self._claim_agent(keys=keys, args=[agent_id, call_id, engaged_ttl_seconds, call_ttl_seconds])
        return None if since is None else int(float(since))

    def consult_key(self, account_id: str, leg_id: str) -> str:
        return f"{self.prefix}cc:{account_id}:consult:{leg_id}"

    def claim_consulted(self, account_id: str, agent_id: str, leg_id: str,
                        registration: tuple[str, str]) -> Optional[int]:
        """Atomically take one idle, registered agent to be consulted in an attended transfer
        (app/voice/consult_actions.py), its engaged mark held by the consulted leg ``leg_id``:
        the callbacks' claim, so a queue caller, a callback and a consultation never get the
        same agent. Returns its idle-since ms (to put it back in place), else None."""
        keys = [self.idle_key(account_id), self.engaged_prefix(account_id) + agent_id,
                self.reg_key(*registration), self.consult_key(account_id, leg_id)]
        since = self._claim_agent(keys=keys, args=[agent_id, leg_id, ENGAGED_TTL_SECONDS, ENGAGED_TTL_SECONDS])
        return None if since is None else int(float(since))

    def unclaim_consulted(self, account_id: str, agent_id: str, leg_id: str) -> bool:
        """Undo ``claim_consulted`` (only the mark ``leg_id`` still holds); the caller decides
        whether the agent is idle again (its state may have changed meanwhile)."""
        keys = [self.engaged_prefix(account_id) + agent_id, "", self.consult_key(account_id, leg_id)]
        return bool(self._unclaim_agent(keys=keys, args=[leg_id, agent_id, 0]))

    def consulted_leg(self, account_id: str, agent_id: str) -> Optional[str]:
        """The consulted leg whose consultation holds the agent now (its engaged mark is that
        leg and the consultation's mark names the agent), else None: what the agent channel
        checks before a consulted agent's ``reject``."""
        leg = self.engaged_by(account_id, agent_id)
        if not leg:
            return None
        holder = self.redis.get(self.consult_key(account_id, leg))
        holder = holder.decode() if isinstance(holder, bytes) else holder
        return leg if holder == agent_id else None

    def hand_over_consulted(self, account_id: str, agent_id: str, leg_id: str, call_id: str) -> bool:
        """A consulted agent took the caller (attended transfer completed): its engaged mark
        passes from the consulted leg to the caller's call, with ``leg_id`` as its leg, as a
        queue agent's after its answer, so the agent channel's hangup/hold/dtmf act on it and
        ``release`` ends it with the call. False when the leg no longer holds the agent."""
        keys = [self.engaged_prefix(account_id) + agent_id, self.leg_key(account_id, agent_id),
                self.consult_key(account_id, leg_id)]
        return bool(self._hand_over(keys=keys, args=[leg_id, call_id, ENGAGED_TTL_SECONDS, _WAITING_TTL_SECONDS]))

    def callback_call_agent(self, account_id: str, call_id: str) -> Optional[str]:
        """The agent a callback call was dialled for, while its mark lives."""
        value = self.redis.get(self.callback_call_key(account_id, call_id))
        return value.decode() if isinstance(value, bytes) else value

    def unclaim_agent(self, account_id: str, agent_id: str, call_id: str,
                      idle_since_ms: Optional[int]) -> bool:
        """Undo ``claim_agent`` for ``call_id``: the engaged mark goes (only if this call still
        holds it) and, with ``idle_since_ms``, the agent is idle again at that place."""
        keys = [self.engaged_prefix(account_id) + agent_id,
                self.idle_key(account_id) if idle_since_ms is not None else "",
                self.callback_call_key(account_id, call_id)]
        return bool(self._unclaim_agent(keys=keys, args=[call_id, agent_id, idle_since_ms or 0]))
