"""What a live call measures for its interaction summary, beyond FreeSWITCH's hang-up facts.

The queue verb stamps when the caller joined and left the line, when the accepted offer
started and when the agent answered; the session counts the holds it saw (CHANNEL_HOLD /
CHANNEL_UNHOLD on the caller's leg: ``uuid_hold`` fires them without updating the leg's
``hold_events``). Plain values on the call's CallContext: nothing is written until the call
record's own transaction (app/calls/records.py), so a call that never reaches a queue costs
nothing more.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from app import limits


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class InteractionTimes:
    queue_joined_at: Optional[datetime] = None
    queue_left_at: Optional[datetime] = None      # answered by an agent, timed out or hung up
    queue_result: Optional[str] = None            # answered | timeout | hangup (abandoned)
    offered_at: Optional[datetime] = None         # the offer the agent accepted
    connected_at: Optional[datetime] = None       # the agent answered (CHANNEL_BRIDGE)
    # the queue's setting (queues.short_abandon_seconds) once the caller joined a configured queue
    short_abandon_seconds: int = limits.SHORT_ABANDON_SECONDS
    segment_id: Optional[uuid.UUID] = None        # the agent's ownership window (interaction_segment)
    holds: int = 0                                # CHANNEL_HOLD seen on the caller's leg
    held_ms: int = 0                              # closed windows between CHANNEL_HOLD and UNHOLD

    def ms_between(self, start: Optional[datetime], end: Optional[datetime]) -> Optional[int]:
        if start is None or end is None:
            return None
        return max(0, round((end - start).total_seconds() * 1000))
