"""The caller's side of an attended transfer (app/calls/consult.py): while its agent consults
someone, the caller's own session plays it the queue's hold music; when the consultation ends
the session bridges the caller with ``intercept`` to the consulted party (complete) or back to
its agent (cancel, or the consulted party hung up).

Why ``intercept`` run by the session and not ``uuid_bridge``: ``uuid_bridge`` transfers the
caller's channel out of the application the socket runs (to the ``uuid_bridge`` extension),
so the session would lose it; ``intercept`` is an application on the caller's own leg, its
completion comes back to the session like a ``bridge``'s, and it hangs up the partner of the
leg it takes (the consulting agent, on complete).
"""
from __future__ import annotations

import logging

from app.calls.consult import BACK, COMPLETE, Consult
from app.verbs.context import VerbContext
from esl.errors import ChannelHungUp, EslError

log = logging.getLogger(__name__)


def hold_until_decided(ctx: VerbContext, music: str) -> Consult:
    """Hold music until the consultation has an outcome (its action, or the consulted leg's
    hangup hook, breaks the playback).
    Raises ChannelHungUp when the caller hangs up meanwhile, after hanging up both the
    consulted party and the consulting agent (no one is left talking on a call that ended)."""
    consult = ctx.consult
    assert consult is not None
    try:
        while consult.outcome is None:
            ctx.execute("playback", music)
            # broken by the consulted leg's hangup hook (no one told the controller): gone
            if consult.outcome is None and ctx.api(f"uuid_exists {consult.consult_leg}").strip() != "true":
                consult.outcome = BACK
    except ChannelHungUp:
        for leg in (consult.consult_leg, consult.agent_leg):
            _quiet_api(ctx, f"uuid_kill {leg} NORMAL_CLEARING")
        ctx.consult = None
        raise
    ctx.consult = None
    return consult


def rejoin(ctx: VerbContext, consult: Consult) -> None:
    """Bridge the caller to the consulted party (complete) or back to its agent, until that
    bridge ends. The agent's leg was parked with ``park_after_bridge``: taken back, it must
    end with the caller, not park again; whichever leg the caller was bridged to is hung up
    when the caller's side ends first (not when the agent consults again)."""
    leg = consult.consult_leg if consult.outcome == COMPLETE else consult.agent_leg
    if consult.outcome != COMPLETE:
        _quiet_api(ctx, f"uuid_setvar {leg} park_after_bridge false")
    try:
        ctx.execute("intercept", leg)
    finally:
        if ctx.consult is None:  # else the agent consults again: its leg was parked, not gone
            _quiet_api(ctx, f"uuid_kill {leg} NORMAL_CLEARING")


def _quiet_api(ctx: VerbContext, command: str) -> None:
    try:
        ctx.api(command)
    except EslError as exc:  # the leg or the caller's socket is already gone
        log.info("call %s: %s not done (%s)", ctx.call_id, command.split()[0], exc)
