"""The caller's side of a three-way call (docs/agents.md "Three-way calls"): the agent added
the party it consulted (app/voice/three_way_actions.consult_conference moved both legs into one
room); the caller's session joins that room and stays until fewer than two remain.

Why the session joins with ``conference`` as for a transfer (app/verbs/consult_hold.py): the
caller's leg must stay driven by the session's socket. Who owns the caller is the first agent
until it leaves (``leave``); then the consulted agent, whose window opens then, or nobody (a
number or ``sip:`` target: the talk goes on without an agent's window).
"""
from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Callable, Optional

from app.calls.consult import Consult, release_target
from app.calls.interaction_times import utc_now
from app.contact import interactions
from app.verbs.consult_hold import three_way_room
from app.verbs.context import VerbContext
from esl.errors import EslError

log = logging.getLogger(__name__)


def run(ctx: VerbContext, contact: Any, consult: Consult, release_first: Callable[[], None]) -> Optional[str]:
    """Join the three-way room until it ends. ``release_first`` frees the first agent (its
    queue's wrap-up) when it leaves. Returns the agent who has the caller at the end: the
    first agent if it stayed, else the consulted agent (None for a number or sip: target).

    An agent target is part of the call from the moment it joins: its window (segment) opens
    then, ``conferenced``, beside the first agent's; it becomes the window the call record
    closes when the first agent leaves (its talk counted from its joining; the summary's talk
    from the leaving, so the three-way minutes are not counted twice), or it is closed here
    when the room ends with the first agent still in it."""
    times = ctx.interaction
    if times.segment_id is not None:
        interactions.mark_conferenced(ctx.account_id, times.segment_id)
    owner: dict[str, Optional[str]] = {"agent": ctx.agent_id}
    done = {"left": False}
    target = consult.target.value if consult.target.kind == "agent" else None
    joined_at = utc_now()
    ctx.journey_note(f"conference:{consult.target.kind}")
    joined_segment = None
    if target is not None:
        joined_segment = contact.open_segment(ctx.account_id, ctx.trace_id, ctx.call_id, target, joined_at)
        if joined_segment is not None:
            interactions.mark_conferenced(ctx.account_id, joined_segment)

    def left(at: datetime) -> None:
        """The first agent left (its leg is being hung up): its window closes ``conferenced``,
        it is released, the consulted agent (if one) takes the caller in the window it opened
        on joining. Once, whichever of the leave action and this session sees it first."""
        if done["left"]:
            return
        done["left"] = True
        closed = times.close_window(at)
        if closed is not None:
            segment_id, _started, talk_ms, hold_ms = closed
            interactions.close_conferenced_segment(ctx.account_id, segment_id, at, talk_ms, hold_ms)
        ctx.agent_unbridged()
        release_first()
        owner["agent"] = target
        if target is None:
            times.talk_resumed_at = at
            return
        ctx.agent_id = target  # the record's agent: the last agent who had the caller
        contact.accepted(ctx.account_id, target)
        times.segment_started_at = at          # the summary's talk goes on from here
        times.segment_joined_at = joined_at    # the window's own talk: from its joining
        times.segment_id = joined_segment
        ctx.agent_bridged(target, None)

    consult.on_leave = left
    if consult.left_at is not None:  # the agent left before the session got here
        left(consult.left_at)
    try:
        ctx.execute("conference", three_way_room(consult))
    finally:
        consult.on_leave = None
        ctx.consult = None
        for leg in ((consult.consult_leg,) if consult.left else (consult.consult_leg, consult.agent_leg)):
            _quiet_kill(ctx, leg)  # the room ended: whoever is left in it goes too
        if not consult.left:
            # the consulted agent took part but never had the caller alone: its window closes
            # with the room (no hold of its own) and it goes back to the idle line, no wrap-up
            if joined_segment is not None:
                ended = utc_now()
                talk_ms = max(0, round((ended - joined_at).total_seconds() * 1000))
                interactions.close_conferenced_segment(ctx.account_id, joined_segment, ended, talk_ms, 0)
            release_target(contact, ctx.account_id, consult)
    return owner["agent"]


def _quiet_kill(ctx: VerbContext, leg: str) -> None:
    try:
        ctx.api(f"uuid_kill {leg} NORMAL_CLEARING")
    except EslError as exc:  # the leg or the caller's socket is already gone
        log.info("call %s: uuid_kill not done (%s)", ctx.call_id, exc)
