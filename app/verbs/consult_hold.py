"""The caller's side of an attended transfer (app/calls/consult.py): while its agent consults
someone, the caller's own session plays it the queue's hold music; when the consultation ends
the session puts the caller in a two-party conference with the consulted party (complete) or
back with its agent (cancel, or the consulted party hung up).

Why a two-party conference and not ``intercept``/``uuid_bridge``: both transfer the caller's
channel out of the socket application (on the real switch the caller's intercept returned at
once and FreeSWITCH closed the socket: the session lost the caller). ``conference`` runs on
the caller's own leg and returns to the session like a ``bridge``; the other leg is moved in
with ``uuid_transfer … inline``, as the agent's leg was moved out of the caller's bridge.
"""
from __future__ import annotations

import logging
import time

from app import limits
from app.calls.consult import BACK, COMPLETE, CONFERENCE, Consult
from app.verbs.conference import CONFERENCE_PROFILE
from app.verbs.context import VerbContext
from esl.errors import ChannelHungUp, EslError

log = logging.getLogger(__name__)

ROOM_POLL_SECONDS = 0.05   # how often the room is asked whether the other leg joined the caller
ROOM_WAIT_SECONDS = 60.0   # then the caller's conference is waited for in slices this long


def hold_until_decided(ctx: VerbContext, music: str) -> Consult:
    """Hold music until the consultation has an outcome (its action, or the consulted leg's
    hangup hook, breaks the playback). While the agent has swapped back to the caller, the
    caller is in their room instead (the agent's leg leaving it returns the conference).
    Raises ChannelHungUp when the caller hangs up meanwhile, after hanging up both the
    consulted party and the consulting agent (no one is left talking on a call that ended).

    The consulting agent hanging up ends the consultation as its ``cancelConsult`` would, and
    the consulted party is hung up: swapped, its leaving ends the caller's room; with the
    consulted party, their bridge's end hangs that leg up (its hook breaks the music). The
    caller is then taken back to a leg that is gone and its verbs go on, as when an agent
    hangs up a plain call. Without this the caller sat alone in the room and the consulted
    party on its music for ever (seen on the real switch)."""
    consult = ctx.consult
    assert consult is not None
    try:
        while consult.outcome is None:
            if consult.swapped:  # the agent came back to talk (swap) until it swaps again or ends
                ctx.execute("conference", room(consult))
            else:
                ctx.execute("playback", music)
            if consult.outcome is not None:
                break
            if not _exists(ctx, consult.agent_leg):  # the consulting agent hung up
                log.info("call %s: the consulting agent's leg %s hung up; consultation ended",
                         ctx.call_id, consult.agent_leg)
                _quiet_api(ctx, f"uuid_kill {consult.consult_leg} NORMAL_CLEARING")
                consult.cancelled = True
                consult.outcome = BACK
            elif not _exists(ctx, consult.consult_leg):  # broken by its hangup hook: gone
                consult.outcome = BACK
    except ChannelHungUp:
        for leg in (consult.consult_leg, consult.agent_leg):
            _quiet_api(ctx, f"uuid_kill {leg} NORMAL_CLEARING")
        ctx.consult = None
        raise
    if consult.outcome != CONFERENCE:  # a three-way call keeps it (app/verbs/three_way.py)
        ctx.consult = None
    return consult


def room(consult: Consult) -> str:
    """The two-party conference the caller and the leg it goes to meet in: ``endconf`` for
    both, so either leaving ends it (the caller's ``conference`` returns to the session).
    Named after the consulted leg and the meeting's number (``next_room``)."""
    return f"xfer-{consult.consult_leg}-{consult.rooms}@{CONFERENCE_PROFILE}+flags{{endconf}}"


def three_way_room(consult: Consult) -> str:
    """The three-way call's room: ``mintwo`` for every member, so the agent leaving leaves the
    caller and the consulted party talking, and it ends when fewer than two remain (the
    caller's ``conference`` then returns: ``hangup_after_conference=false``)."""
    return f"xfer-{consult.consult_leg}-3way@{CONFERENCE_PROFILE}+flags{{mintwo}}"


def next_room(consult: Consult) -> str:
    """A new room for the next meeting (a swap, the rejoin)."""
    consult.rooms += 1
    return room(consult)


def rejoin(ctx: VerbContext, consult: Consult) -> None:
    """Put the caller with the consulted party (complete: the agent's leg is hung up first) or
    back with its agent, until one of them leaves. The leg is parked (``park_after_bridge``)
    and moved into the room; the caller's session joins it with ``conference``, an application
    of its own leg. Whichever leg the caller was with is hung up when the caller leaves first.

    Back with its agent, the agent may consult again: the consult action takes the agent's leg
    (``agent_room_leg``) out of the room, which ends it (``endconf``) and returns the caller's
    ``conference`` here; that leg then lives on, parked for the next consultation."""
    leg = consult.consult_leg if consult.outcome == COMPLETE else consult.agent_leg
    if consult.outcome == COMPLETE:
        _quiet_api(ctx, f"uuid_kill {consult.agent_leg} NORMAL_CLEARING")
    _quiet_api(ctx, f"uuid_setvar {leg} park_after_bridge false")
    moved = _quiet_api(ctx, f"uuid_transfer {leg} 'conference:{next_room(consult)}' inline")
    ctx.agent_room_leg = leg if consult.outcome == BACK else None
    consulting_again = False
    try:
        if moved.startswith("+OK"):
            _meet(ctx, consult, leg)
            consulting_again = ctx.consult is not None and ctx.consult.agent_leg == leg
        else:
            # gone before it could be moved in: the caller would wait alone in the room for
            # ever (``endconf`` ends it when a member leaves, and this one never comes). Seen
            # on the real switch: a cancel landing while the consulted leg's ``intercept``
            # bridged the agent's parked leg, which FreeSWITCH hung up with it. No one is
            # left for the caller: its verbs go on (a queue's end: the call is hung up).
            log.warning("call %s: leg %s gone before the caller's room (%s); not joined",
                        ctx.call_id, leg, moved.strip() or "no reply")
    finally:
        ctx.agent_room_leg = None
        if not consulting_again:
            _quiet_api(ctx, f"uuid_kill {leg} NORMAL_CLEARING")
            if ctx.consult is not None:  # the caller left as the agent began another consultation
                _quiet_api(ctx, f"uuid_kill {ctx.consult.consult_leg} NORMAL_CLEARING")


def _meet(ctx: VerbContext, consult: Consult, leg: str) -> None:
    """The caller joins the room ``leg`` was moved into, until either leaves (``endconf``).
    Until ``leg`` is a member too, nothing would end the room if it never came (it died on
    its way in, or its move was lost): the room is watched every ROOM_POLL_SECONDS until it
    is, at most CONSULT_ROOM_JOIN_SECONDS, then the caller is taken out (``kick``; the
    caller's ``hangup_after_conference=false`` returns it here)."""
    arg = room(consult)
    name = arg.split("@", 1)[0]
    app = ctx.execute_async("conference", arg)
    deadline = time.monotonic() + limits.CONSULT_ROOM_JOIN_SECONDS
    while ctx.poll_execute(app, ROOM_POLL_SECONDS) is None:
        if _member(ctx.api(f"conference {name} list"), leg):
            break  # both members: either leaving ends the room
        if time.monotonic() >= deadline or not _exists(ctx, leg):
            log.warning("call %s: leg %s never joined the caller's room %s; the caller is taken out",
                        ctx.call_id, leg, name)
            _quiet_api(ctx, f"conference {name} kick all")
            break
    else:
        return
    while ctx.poll_execute(app, ROOM_WAIT_SECONDS) is None:
        continue


def _exists(ctx: VerbContext, leg: str) -> bool:
    return ctx.api(f"uuid_exists {leg}").strip() == "true"


def _member(listing: str, leg: str) -> bool:
    """Whether ``conference <room> list`` names ``leg`` as a member (``id;name;uuid;…`` lines;
    the room's own name holds the consulted leg's uuid too, so not a substring test)."""
    return any(line.split(";")[2:3] == [leg] for line in listing.splitlines())


def _quiet_api(ctx: VerbContext, command: str) -> str:
    """The switch's reply ('' when the caller's socket is gone)."""
    try:
        return ctx.api(command)
    except EslError as exc:  # the leg or the caller's socket is already gone
        log.info("call %s: %s not done (%s)", ctx.call_id, command.split()[0], exc)
        return ""
