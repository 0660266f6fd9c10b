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
    queue_result: Optional[str] = None            # answered | timeout | redirected | hangup (abandoned)
    offered_at: Optional[datetime] = None         # the offer the agent accepted
    connected_at: Optional[datetime] = None       # the agent answered (CHANNEL_BRIDGE)
    # the queue's setting (queues.short_abandon_seconds) once the caller joined a configured queue
    short_abandon_seconds: int = limits.SHORT_ABANDON_SECONDS
    segment_id: Optional[uuid.UUID] = None        # the agent's ownership window (interaction_segment)
    holds: int = 0                                # CHANNEL_HOLD seen on the caller's leg
    held_ms: int = 0                              # closed windows between CHANNEL_HOLD and UNHOLD
    # the queue the caller was answered from and its priority there: a blind transfer to an
    # agent offers the caller through that queue, a transfer to a queue keeps the priority
    queue_name: Optional[str] = None
    queue_priority: int = 0
    transfers: int = 0                            # blind transfers done (summary transfer_count)
    # the current agent's window: when it began (the first agent's is connected_at) and the
    # hold already counted before it (a later agent's window has only its own holds)
    segment_started_at: Optional[datetime] = None
    segment_hold_base_ms: int = 0
    # the current window's agent joined the call before it had the caller (a three-way call's
    # consulted agent): its window's talk counts from then, the summary's from segment_started_at
    segment_joined_at: Optional[datetime] = None
    transferred_at: Optional[datetime] = None     # the last blind transfer
    talk_before_ms: int = 0                       # talk of the agents' windows a transfer closed
    # windows closed before the call's end: by transfers, or by an agent leaving a three-way
    # call (which is not a transfer: ``transfers`` does not count it)
    windows_closed: int = 0
    # an agent left a three-way call to a number or sip: target: the talk goes on from then
    # without an agent's window
    talk_resumed_at: Optional[datetime] = None

    def ms_between(self, start: Optional[datetime], end: Optional[datetime]) -> Optional[int]:
        if start is None or end is None:
            return None
        return max(0, round((end - start).total_seconds() * 1000))

    def transfer(self, at: datetime) -> Optional[tuple[uuid.UUID, datetime, int, int]]:
        """A blind transfer at ``at`` closes the current agent's window: returns (segment id,
        its start, talk ms, hold ms) to write, or None when no window was open or stored.
        From now on the next agent's window (or a dialled party's talk) counts on its own."""
        self.transfers += 1
        self.transferred_at = at
        return self.close_window(at)

    def close_window(self, at: datetime) -> Optional[tuple[uuid.UUID, datetime, int, int]]:
        """The current agent's window ends at ``at`` (a transfer, or the agent left a three-way
        call): as ``transfer`` returns, without counting a transfer."""
        started = self.segment_started_at or (self.connected_at if not self.windows_closed else None)
        closed = None
        if started is not None:
            hold_ms = max(0, self.held_ms - self.segment_hold_base_ms)
            talk_ms = max(0, round((at - started).total_seconds() * 1000) - hold_ms)
            self.talk_before_ms += talk_ms
            if self.segment_id is not None:
                closed = (self.segment_id, started, talk_ms, hold_ms)
        self.windows_closed += 1
        self.segment_id = self.segment_started_at = self.segment_joined_at = None
        self.segment_hold_base_ms = self.held_ms
        return closed

