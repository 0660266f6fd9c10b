"""What a campaign's calls measured, kept in Redis so that any ``sbc workers`` can pace it.

The pacer (app/campaigns/pacing.py) decides from a campaign's rolling measurements
(``PacingStats``: dial outcomes, live answers with their abandons, talk and wrap-up times) and from its
calls in flight (ringing, and answered still live). Outcomes arrive on ``call.ended`` at
whichever instance's consumer takes the event, while the campaign is paced by its lease holder
— and the lease moves when an instance dies — so neither lives in one process's memory:

- ``measures``: one Redis list per campaign of the real outcomes, newest first, capped at
  ``CAMPAIGN_MEASURES_MAX``; ``stats()`` replays them (oldest first) into a fresh
  ``PacingStats``, so the abandon rate, the answer rate and predictive's correction are the
  same on every instance;
- ``calls``: one hash per campaign of its calls in flight, call id → the stage it is in and
  since when (epoch seconds). Each stage is a different thing for the pacer:
  ``RINGING`` (placed, not answered), ``SCREENING`` (answered, the answering-machine verdict not
  in yet: a person at the measured share of answers, within a second or two or not at all),
  ``CONNECTING`` (a person waiting at most ``CAMPAIGN_ABANDON_CONNECT_SECONDS`` for an agent:
  the pacer counts them from the line's own count of waiting callers) and ``TALKING`` (with
  an agent since then: the agent is free when the talk and its wrap-up end). The controller's
  events move a call on: ``call.answered`` (to SCREENING, or straight to CONNECTING when the
  campaign has no detection), ``call.amd`` (a person: CONNECTING; a machine hung up or left a
  message: out), ``agent.accept`` (TALKING), ``call.ended`` (out).
"""
from __future__ import annotations

import json
import uuid
from typing import Any, NamedTuple, Optional

import redis

from app import limits
from app.campaigns import pacing

# measured event kinds
DIAL, ANSWER, HANDLE = "dial", "answer", "handle"
# the stages of a call in flight, in the order a call goes through them (``advance`` only
# moves a call forward: the events that move it may arrive out of order)
RINGING, SCREENING, CONNECTING, TALKING = STAGES = (0, 1, 2, 3)

# KEYS[1] the campaign's calls; ARGV: call id, stage, entry, ttl. The stage is the entry's
# prefix up to ':'; a call not in the hash (ended, unknown) is left out.
_ADVANCE = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
if tonumber(string.match(current, '^(%d+):')) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


class InFlight(NamedTuple):
    """Per stage, the seconds each call in flight has spent in it, shortest first."""
    ringing: tuple[float, ...]
    screening: tuple[float, ...]
    connecting: tuple[float, ...]
    talking: tuple[float, ...]


class CampaignMeasures:
    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.redis, self.prefix = client, prefix
        self._advance = client.register_script(_ADVANCE)

    def _key(self, what: str, campaign_id: uuid.UUID | str) -> str:
        return f"{self.prefix}campaign:{what}:{campaign_id}"

    # -- outcomes ------------------------------------------------------------------------------
    def record(self, campaign_id: uuid.UUID | str, at: float, *, answered: bool, person: bool, abandoned: bool,
               ring_seconds: float, talk_seconds: float, verdict_seconds: float = 0.0,
               wrap_up_seconds: float = 0.0) -> None:
        """One attempt's real outcome (its ``call.ended``): a dial outcome — a person or not,
        resolved ``ring_seconds`` after the dial (to the answer, or to the end of an unanswered
        call) plus, for an answered call, ``verdict_seconds`` of answering-machine detection
        (0 without it: the answer is the verdict) — and for a person a live answer (abandoned
        or connected) and, once connected, its handle time: the talk and the wrap-up of the
        agent group that took it (the agent is ready for the next answer only after both). A
        machine is no live answer: counting it as one would water the abandon rate down."""
        dial: dict[str, Any] = {"k": DIAL, "at": at, "human": person,
                                "delay": ring_seconds + (verdict_seconds if answered else 0.0)}
        if answered:
            dial["answeredAfter"] = ring_seconds
        events: list[dict[str, Any]] = [dial]
        if person:
            events.append({"k": ANSWER, "at": at, "abandoned": abandoned})
            if not abandoned:
                events.append({"k": HANDLE, "at": at, "seconds": talk_seconds, "wrap": wrap_up_seconds})
        key = self._key("measures", campaign_id)
        pipe = self.redis.pipeline()
        pipe.lpush(key, *(json.dumps(e) for e in events))
        pipe.ltrim(key, 0, limits.CAMPAIGN_MEASURES_MAX - 1)
        pipe.expire(key, limits.CAMPAIGN_CALL_MARK_TTL_SECONDS)
        pipe.execute()

    def stats(self, campaign_id: uuid.UUID | str, *, cap_percent: float) -> pacing.PacingStats:
        """The campaign's ``PacingStats``, replayed from its recorded outcomes."""
        stats = pacing.PacingStats(cap_percent=cap_percent)
        for raw in reversed(self.redis.lrange(self._key("measures", campaign_id), 0, -1)):
            event = json.loads(raw)
            if event["k"] == DIAL:
                stats.dial_outcome(event["at"], human=event["human"], delay=event["delay"],
                                   answered_after=event.get("answeredAfter"))
            elif event["k"] == ANSWER:
                stats.live_answer(event["at"], abandoned=event["abandoned"])
            else:  # an event recorded before wrap-ups were (at most a TTL ago): none
                stats.handled(talk=event["seconds"], wrap_up=event.get("wrap", 0.0))
        return stats

    # -- calls in flight -----------------------------------------------------------------------
    def placed(self, campaign_id: uuid.UUID | str, call_ids: list[str], at: float) -> None:
        if call_ids:
            key = self._key("calls", campaign_id)
            pipe = self.redis.pipeline()
            pipe.hset(key, mapping={c: _entry(RINGING, at) for c in call_ids})
            pipe.expire(key, limits.CAMPAIGN_CALL_MARK_TTL_SECONDS)
            pipe.execute()

    def advance(self, campaign_id: uuid.UUID | str, call_id: str, stage: int, at: float) -> bool:
        """Move a call in flight on to ``stage`` (``SCREENING``, ``CONNECTING``, ``TALKING``),
        timed from ``at``. Forward only, atomically: the events that say so come through a
        work queue shared by every ``sbc workers``, so a late ``call.answered`` must not take
        back a call an agent already took; a call not in flight (ended, or never placed by
        this dialer) stays out. Returns whether it moved."""
        return bool(self._advance(keys=[self._key("calls", campaign_id)],
                                  args=[call_id, stage, _entry(stage, at), limits.CAMPAIGN_CALL_MARK_TTL_SECONDS]))

    def ended(self, campaign_id: uuid.UUID | str, call_id: str) -> None:
        """The call is no longer in flight: it ended, or a machine's verdict settled it."""
        self.redis.hdel(self._key("calls", campaign_id), call_id)

    def in_flight(self, campaign_id: uuid.UUID | str, now: float) -> InFlight:
        """The campaign's calls in flight by stage, with the seconds each has spent in it. An
        entry older than ``CAMPAIGN_CALL_MARK_TTL_SECONDS`` is a lost event and is dropped (a
        controller that died mid-ring sends neither answer nor end)."""
        key = self._key("calls", campaign_id)
        by_stage: dict[int, list[float]] = {stage: [] for stage in STAGES}
        lost: list[Any] = []
        for call_id, raw in self.redis.hgetall(key).items():
            stage, _, at = (raw.decode() if isinstance(raw, bytes) else raw).partition(":")
            seconds = max(0.0, now - float(at))
            if seconds > limits.CAMPAIGN_CALL_MARK_TTL_SECONDS:
                lost.append(call_id)
            else:
                by_stage[int(stage)].append(seconds)
        if lost:
            self.redis.hdel(key, *lost)
        return InFlight(*(tuple(sorted(by_stage[stage])) for stage in STAGES))


def _entry(stage: int, at: float) -> str:
    return f"{stage}:{at}"


def seconds_of(ms: Optional[int]) -> float:
    return (ms or 0) / 1000
