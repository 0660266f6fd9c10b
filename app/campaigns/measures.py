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
- ``ringing`` / ``live``: one hash each per campaign, call id → epoch seconds dialled /
  answered; ``call.answered`` moves a call from the first to the second, ``call.ended``
  removes it. An entry older than ``CAMPAIGN_CALL_MARK_TTL_SECONDS`` is a lost event and is
  dropped (a controller that died mid-ring sends neither).
"""
from __future__ import annotations

import json
import uuid
from typing import Any, Optional

import redis

from app import limits
from app.campaigns import pacing

# measured event kinds
DIAL, ANSWER, HANDLE = "dial", "answer", "handle"


class CampaignMeasures:
    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.redis, self.prefix = client, prefix

    def _key(self, what: str, campaign_id: uuid.UUID | str) -> str:
        return f"{self.prefix}campaign:{what}:{campaign_id}"

    # -- outcomes ------------------------------------------------------------------------------
    def record(self, campaign_id: uuid.UUID | str, at: float, *, answered: bool, abandoned: bool,
               ring_seconds: float, talk_seconds: float, wrap_up_seconds: float = 0.0) -> None:
        """One attempt's real outcome (its ``call.ended``): a dial outcome (a person or not,
        after ``ring_seconds``), and for an answered call a live answer (abandoned or
        connected) and, once connected, its handle time: the talk and the wrap-up of the
        agent group that took it (the agent is ready for the next answer only after both).
        Without answering-machine detection every answer is a person."""
        events: list[dict[str, Any]] = [{"k": DIAL, "at": at, "human": answered, "delay": ring_seconds}]
        if answered:
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
                stats.dial_outcome(event["at"], human=event["human"], delay=event["delay"])
            elif event["k"] == ANSWER:
                stats.live_answer(event["at"], abandoned=event["abandoned"])
            else:  # an event recorded before wrap-ups were (at most a TTL ago): none
                stats.handled(talk=event["seconds"], wrap_up=event.get("wrap", 0.0))
        return stats

    # -- calls in flight -----------------------------------------------------------------------
    def placed(self, campaign_id: uuid.UUID | str, call_ids: list[str], at: float) -> None:
        if call_ids:
            key = self._key("ringing", campaign_id)
            pipe = self.redis.pipeline()
            pipe.hset(key, mapping={c: at for c in call_ids})
            pipe.expire(key, limits.CAMPAIGN_CALL_MARK_TTL_SECONDS)
            pipe.execute()

    def answered(self, campaign_id: uuid.UUID | str, call_id: str, at: float) -> None:
        """Ringing → live; nothing when the call is not ringing (ended already, or unknown)."""
        if self.redis.hdel(self._key("ringing", campaign_id), call_id):
            key = self._key("live", campaign_id)
            self.redis.hset(key, call_id, at)
            self.redis.expire(key, limits.CAMPAIGN_CALL_MARK_TTL_SECONDS)

    def ended(self, campaign_id: uuid.UUID | str, call_id: str) -> None:
        pipe = self.redis.pipeline()
        pipe.hdel(self._key("ringing", campaign_id), call_id)
        pipe.hdel(self._key("live", campaign_id), call_id)
        pipe.execute()

    def in_flight(self, campaign_id: uuid.UUID | str, now: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(seconds each ringing call has rung, seconds each live call has lasted)."""
        return self._elapsed("ringing", campaign_id, now), self._elapsed("live", campaign_id, now)

    def _elapsed(self, what: str, campaign_id: uuid.UUID | str, now: float) -> tuple[float, ...]:
        key = self._key(what, campaign_id)
        elapsed: list[tuple[Any, float]] = []
        lost: list[tuple[Any, float]] = []
        for call_id, at in self.redis.hgetall(key).items():
            seconds = max(0.0, now - float(at))
            (lost if seconds > limits.CAMPAIGN_CALL_MARK_TTL_SECONDS else elapsed).append((call_id, seconds))
        if lost:
            self.redis.hdel(key, *(c for c, _ in lost))
        return tuple(sorted(s for _, s in elapsed))


def seconds_of(ms: Optional[int]) -> float:
    return (ms or 0) / 1000
