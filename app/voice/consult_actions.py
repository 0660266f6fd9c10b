"""The live actions of an attended transfer (agent channel only; app/calls/consult.py):
``consult``, ``consult_complete``, ``consult_cancel``. Run like every live action on the
controller driving the caller's call (app/voice/live_control.py), one at a time per call.

FreeSWITCH 1.10 mapping:

| action | commands | why |
|---|---|---|
| consult | ``uuid_setvar <caller> hangup_after_bridge false``, ``… hangup_after_conference false``; ``uuid_transfer <agent leg> 'set:park_after_bridge=true,park' inline``; ``bgapi originate {origination_uuid=<leg>,api_on_answer=…,api_hangup_hook='uuid_break <caller>'}<target> &intercept(<agent leg>)`` | the agent leaves the caller's bridge (which returns to the session: the caller gets hold music) and is parked; the target, once it answers, takes the parked agent. When the consulted leg ends, its hangup hook breaks the caller's music: the session takes the agent back |
| consult_complete | ``uuid_setvar <leg> api_hangup_hook`` (unset), for a number ``uuid_getvar <leg> lcr_carrier_id`` / ``lcr_gateway_id`` (the call record's carrier), ``uuid_transfer <leg> 'set:park_after_bridge=true,park' inline``, ``uuid_break <caller>`` | the consulted leg is parked out of its bridge with the agent (the agent's leg is hung up by the switch as its bridge ends); the session (app/verbs/consult_hold.py) moves the consulted leg into a two-party conference and joins it |
| consult_cancel | (answered: ``uuid_dump <agent leg>`` until CS_EXCHANGE_MEDIA, at most 2 s) ``uuid_kill <leg>`` and ``uuid_break <caller>`` | the agent's leg stays parked; the session moves it into a two-party conference with the caller. Killing the consulted leg during its ``intercept`` made the switch hang the agent's leg up too |
| consult_reject | ``uuid_kill <leg> CALL_REJECTED`` and ``uuid_break <caller>`` | the consulted agent's ``reject`` of its ringing offer: as a cancel, the agent is back with its caller (told ``consult`` ``failed``) |
| consult_swap (to the caller) | ``uuid_setvar <leg> park_after_bridge true``, ``uuid_transfer <agent leg> 'conference:<room>' inline``, ``uuid_dump <leg>`` until parked, ``uuid_transfer <leg> 'endless_playback:<music>' inline``, ``uuid_break <caller>`` | the agent leaves the consulted party (parked, then the queue's music) for a room the caller's session joins |
| consult_swap (back) | ``uuid_transfer <agent leg> 'set:park_after_bridge=true,park' inline``, ``uuid_bridge <agent leg> <leg>``, ``uuid_setvar <leg> park_after_bridge false`` | the room ends (``endconf``): the caller holds again; the agent is bridged to the consulted party |

A consultation may follow a cancelled one: the agent's leg is then taken out of the room it
shares with the caller (``agent_room_leg``) instead of out of the caller's bridge.
"""
from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Callable, Optional

import gevent

from app import limits
from app.calls.consult import ANSWERED_VARIABLE, BACK, COMPLETE, CONSULT_KINDS, Consult, consult_offer, release_target
from app.calls.transfers import InvalidTarget, TransferTarget, parse_target
from app.contact.presence import Candidate
from app.events.payloads import call_transferred
from app.routing.lcr import leg_carrier
from app.verbs.consult_hold import next_room
from app.verbs.queue import HOLD_MUSIC_VARIABLE
from app.voice.live_actions import (
    LiveHandle,
    Refused,
    Requester,
    bridged_leg,
    ensure_alive,
    reachable_endpoint,
    switch_api,
)
from esl.errors import EslError

log = logging.getLogger(__name__)

# a leg moved out of a bridge or a room, kept parked for the next step
PARK = "set:park_after_bridge=true,park"
PARK_POLL_SECONDS = 0.02  # how often a leg's state is asked while waiting for it
BRIDGED_STATE = "CS_EXCHANGE_MEDIA"  # the agent's leg once the consulted leg's intercept bridged it
# what a held consulted party hears when the agent's leg has no queue music (the profile's)
DEFAULT_HOLD_MUSIC = "local_stream://moh"


def _endpoint(ctx: Any, target: TransferTarget) -> tuple[str, Optional[Candidate]]:
    """The dial string of the consulted party (the same rules as a blind transfer's verb), and
    for an agent target the agent to claim."""
    if target.kind == "agent":
        if target.value == ctx.agent_id:
            raise Refused("transfer_to_self", "The call is already with this agent.")
        candidate = ctx.contact.candidate(ctx.account_id, target.value) if ctx.contact is not None else None
        if candidate is None:
            raise Refused("transfer_target_not_found", "No agent of the account with SIP credentials has this id.")
        # registered on this switch, or on a peer node it can reach: rung through that node's
        # agent profile, as a cross-node queue offer (docs/agents.md "Several FreeSWITCH nodes")
        if not ctx.contact.reachable_from(candidate, ctx.switch_id):
            raise Refused("consult_target_unavailable",
                          "The agent's phone is not registered, or on a switch this one cannot reach.")
        leg_vars, endpoint = ctx.contact.agent_leg(candidate, ctx.switch_id)
        return (f"[{','.join(leg_vars)}]" if leg_vars else "") + endpoint, candidate
    # a number or a listed ``sip:`` target: refused here before anything is touched (the agent
    # still has its caller), by the dial verb's rules
    return reachable_endpoint(ctx, target), None


def consult(call: LiveHandle, params: dict[str, Any], by: Requester) -> dict[str, Any]:
    """The agent consults ``target`` (an agent, a number or a listed ``sip:`` target) while its
    caller holds with the queue's music."""
    try:
        target = parse_target(params.get("target"))
    except InvalidTarget:
        raise ValueError("target") from None
    if target.kind not in CONSULT_KINDS:
        raise ValueError("target")
    ensure_alive(call)
    ctx = call.ctx
    # bridged to its caller, or back with it in their room after a cancelled consultation
    agent_leg = ctx.agent_room_leg or bridged_leg(call, "consult")
    if ctx.agent_id is None:
        raise Refused("call_not_with_agent", "Only a call answered by an agent can be transferred.")
    if ctx.consult is not None:
        raise Refused("consult_in_progress", "The agent is already consulting someone.")
    endpoint, candidate = _endpoint(ctx, target)
    leg = str(uuid.uuid4())
    since = None
    if candidate is not None:  # claimed like a queue caller's agent: no one else offers it a call now
        since = ctx.contact.claim_consulted(ctx.account_id, candidate, leg)
        if since is None:
            raise Refused("consult_target_busy", "The agent is not free: on a call or an offer, "
                          "in wrap-up, or not available.")
    ctx.consult = consult = Consult(agent_leg=agent_leg, consult_leg=leg, target=target,
                                    from_agent=ctx.agent_id, by=by, claimed_since_ms=since)
    try:
        switch_api(call, f"uuid_setvar {call.call_id} hangup_after_bridge false")
        # a room that ends (the other leg left it) must return the caller to its session:
        # mod_conference hangs up the members of an ended conference unless this is false
        switch_api(call, f"uuid_setvar {call.call_id} hangup_after_conference false")
        # out of the caller's bridge (which returns) or of their room (which ends: endconf)
        switch_api(call, f"uuid_transfer {agent_leg} '{PARK}' inline")
    except Refused:
        ctx.consult = None
        release_target(ctx.contact, ctx.account_id, consult)
        raise
    caller_id = target.caller_id or ctx.from_number or ""
    variables = ",".join([
        f"origination_uuid={leg}", f"sbc_trace_id={ctx.trace_id}",
        f"originate_timeout={limits.CONSULT_RING_SECONDS}",
        *([f"origination_caller_id_number={caller_id}"] if caller_id else []),
        f"api_on_answer='uuid_setvar {leg} {ANSWERED_VARIABLE} true'",
        f"api_hangup_hook='uuid_break {call.call_id}'"])
    if endpoint.startswith("{"):  # a routed number's own global block: one block only
        endpoint = endpoint[1:]
        variables += ","
    else:
        variables += "}"
    reply = call.conn.send_command(f"bgapi originate {{{variables}{endpoint} &intercept({agent_leg})").reply_text
    if not reply.startswith("+OK"):
        _back(call, ctx.consult)
        raise Refused("call_ending", "The switch refused the consultation.")
    if candidate is not None:  # its agent channel: an ``offer`` of kind ``consult`` (relay)
        ctx.publish("agent.consult.offer", consult_offer(ctx, consult))
    return {"to": target.as_dict(), "leg": leg}


def consulting(call: LiveHandle) -> Consult:
    """The consultation in progress, or ``Refused`` (shared with app/voice/three_way_actions)."""
    ensure_alive(call)
    consult = call.ctx.consult
    if consult is None or consult.outcome is not None:
        raise Refused("not_consulting", "The agent is not consulting anyone.")
    return consult


def _back(call: LiveHandle, consult: Consult, cause: str = "NORMAL_CLEARING") -> None:
    """The agent goes back to its caller: the session's hold music is broken, it meets the
    agent's parked leg again (app/verbs/consult_hold.rejoin)."""
    consult.outcome = BACK
    commands = [f"uuid_kill {consult.consult_leg} {cause}", f"uuid_break {call.call_id}"]
    if consult.swapped:  # out of the room the agent shares with the caller: it ends, rejoin follows
        commands.insert(0, f"uuid_transfer {consult.agent_leg} '{PARK}' inline")
    for command in commands:
        try:
            call.conn.api(command)
        except EslError as exc:
            log.info("call %s: %s not done (%s)", call.call_id, command.split()[0], exc)


def consult_cancel(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    """The consulted party is hung up; the agent is back with its caller. An answered party is
    hung up only once its ``intercept`` has bridged the agent's leg (``settle_intercept``)."""
    consult = consulting(call)
    consult.cancelled = True
    settle_intercept(call, consult)
    _back(call, consult)
    return {}


def consult_reject(call: LiveHandle, params: dict[str, Any], by: Requester) -> dict[str, Any]:
    """The consulted agent rejects its ringing ``offer`` of kind ``consult`` (its channel's
    ``reject``): its leg is ended with CALL_REJECTED and the consulting agent is back with its
    caller, as after a cancel; the queue verb withdraws the offer and tells the consulting
    agent (``rejected``) and puts the consulted agent back in the idle line. Only the agent
    consulted may ask (``by``), and only while its leg rings (``no_offer`` otherwise: once
    answered it is a conversation, ended by the consulting agent or by hanging up)."""
    consult = call.ctx.consult if not (call.ending or call.conn.hung_up) else None
    if consult is None or consult.outcome is not None or consult.target.kind != "agent" \
            or consult.target.value != by.get("agentId") \
            or params.get("legId") not in (None, consult.consult_leg):
        raise Refused("no_offer", "No consultation is offered to this agent on this call.")
    answered = call.conn.api(f"uuid_getvar {consult.consult_leg} {ANSWERED_VARIABLE}").strip()
    if answered == "true":
        raise Refused("no_offer", "The consultation was answered: it is no longer an offer.")
    consult.rejected = True
    _back(call, consult, cause="CALL_REJECTED")
    return {"agentId": consult.target.value}


def consult_complete(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    """The caller goes to the consulted party (who has answered); the consulting agent leaves."""
    consult = consulting(call)
    answered = call.conn.api(f"uuid_getvar {consult.consult_leg} {ANSWERED_VARIABLE}").strip()
    if answered != "true":
        raise Refused("consult_not_answered", "The consulted party has not answered yet.")
    settle_intercept(call, consult, answered=True)
    switch_api(call, f"uuid_setvar {consult.consult_leg} api_hangup_hook")
    consult.outcome = COMPLETE
    record_carrier(call, consult)
    if consult.swapped:  # the agent leaves the room it shares with the caller (it ends)
        switch_api(call, f"uuid_transfer {consult.agent_leg} '{PARK}' inline")
    # the consulted leg leaves its bridge with the agent and parks until the caller's session
    # moves it into their room (app/verbs/consult_hold.rejoin)
    switch_api(call, f"uuid_transfer {consult.consult_leg} '{PARK}' inline")
    call.transferred(call_transferred(call.call_id, kind="attended", from_agent=consult.from_agent,
                                      to=consult.target.as_dict(), by=consult.by))
    switch_api(call, f"uuid_break {call.call_id}")
    return {"kind": "attended", "to": consult.target.as_dict()}


def record_carrier(call: LiveHandle, consult: Consult) -> None:
    """A number the caller now talks to through a carrier: the call record (and ``call.ended``)
    name that carrier and gateway (``dial_carrier_id``/``dial_gateway_id``), as a ``dial``
    verb's routed leg does; read from the consulted leg's own ``[...]`` variables. At a
    completion, and as the agent leaves a three-way call (app/voice/three_way_actions)."""
    if consult.target.kind != "number":
        return
    leg = consult.consult_leg
    answered = leg_carrier(lambda name: call.conn.api(f"uuid_getvar {leg} {name}").strip())
    if answered is not None:
        call.ctx.record_dial_carrier(*answered)
    else:
        log.warning("call %s: consulted leg %s names no carrier", call.call_id, leg)


def _channel_state(call: LiveHandle, leg: str) -> str:
    """``Channel-State`` of ``leg`` (``uuid_dump``), '' when the switch does not say."""
    try:
        dump = call.conn.api(f"uuid_dump {leg}")
    except EslError:
        return ""
    for line in dump.splitlines():
        if line.startswith("Channel-State:"):
            return line.split(":", 1)[1].strip()
    return ""


def ensure_talking(call: LiveHandle, consult: Consult) -> None:
    """The consulted party answered and is talking with the agent: ``Refused``
    (``consult_not_answered``) otherwise. Answered is not enough: its ``intercept`` of the
    parked agent's leg bridges them a moment later (the agent's leg goes CS_PARK → … →
    CS_EXCHANGE_MEDIA), and moving the agent's leg before then left the consulted leg stuck,
    silent, on the real switch. Waits at most CONSULT_PARK_WAIT_SECONDS for that bridge."""
    answered = call.conn.api(f"uuid_getvar {consult.consult_leg} {ANSWERED_VARIABLE}").strip()
    if answered != "true":
        raise Refused("consult_not_answered", "The consulted party has not answered yet.")
    if consult.swapped:  # the agent is with the caller: the consulted leg holds on its own
        return
    if not _agent_bridged(call, consult):
        raise Refused("consult_not_answered", "The consulted party is not connected to the agent yet.")


def _agent_bridged(call: LiveHandle, consult: Consult) -> bool:
    """Wait (at most CONSULT_PARK_WAIT_SECONDS) until the consulted leg's ``intercept`` has
    bridged the agent's leg (CS_EXCHANGE_MEDIA); whether it did."""
    deadline = time.monotonic() + limits.CONSULT_PARK_WAIT_SECONDS
    while (state := _channel_state(call, consult.agent_leg)) != BRIDGED_STATE:
        if not state or time.monotonic() >= deadline:  # gone (or the switch does not say), or too long
            return False
        gevent.sleep(PARK_POLL_SECONDS)
    return True


def settle_intercept(call: LiveHandle, consult: Consult, *, answered: Optional[bool] = None) -> None:
    """Before an answered consulted leg is hung up or moved (cancel, complete), its
    ``intercept`` of the agent's parked leg must have finished: on two real switches a cancel
    landing in between (the consulted leg killed while intercepting) made FreeSWITCH hang the
    agent's leg up too (DESTINATION_OUT_OF_ORDER), and the caller had no one to go back to.
    Waits at most CONSULT_PARK_WAIT_SECONDS, then goes on anyway (the caller's session does
    not wait for a leg that is gone: app/verbs/consult_hold.rejoin). ``answered``: already
    read by the caller (None: asked of the switch here)."""
    if consult.swapped:  # the agent is with the caller, not being intercepted
        return
    if answered is None:
        answered = call.conn.api(f"uuid_getvar {consult.consult_leg} {ANSWERED_VARIABLE}").strip() == "true"
    if answered and not _agent_bridged(call, consult):
        log.warning("call %s: agent leg %s not bridged to the consulted leg (gone, or not within %s s)",
                    call.call_id, consult.agent_leg, limits.CONSULT_PARK_WAIT_SECONDS)


def wait_parked(call: LiveHandle, leg: str) -> None:
    """Once the agent's leg has left its bridge with ``leg``, wait (at most
    CONSULT_PARK_WAIT_SECONDS) until ``leg`` is parked (``park_after_bridge``) before moving it:
    a ``uuid_transfer`` landing while the bridge was still ending was lost on the real switch
    (the leg stayed in CS_ROUTING, silent). Shared with app/voice/three_way_actions."""
    deadline = time.monotonic() + limits.CONSULT_PARK_WAIT_SECONDS
    while time.monotonic() < deadline:
        if _channel_state(call, leg) in ("CS_PARK", ""):  # parked, or gone
            return
        gevent.sleep(PARK_POLL_SECONDS)
    log.warning("call %s: consulted leg %s not parked after %s s", call.call_id, leg,
                limits.CONSULT_PARK_WAIT_SECONDS)


def consult_swap(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    """The agent toggles between the consulted party and its caller; the one it leaves holds
    with the queue's music (the caller in its session's playback, the consulted party in an
    ``endless_playback`` of its own)."""
    consult = consulting(call)
    ensure_talking(call, consult)
    agent, leg = consult.agent_leg, consult.consult_leg
    if not consult.swapped:
        music = call.conn.api(f"uuid_getvar {agent} {HOLD_MUSIC_VARIABLE}").strip()
        if not music or music.startswith("_undef_") or music.startswith("-ERR"):
            music = DEFAULT_HOLD_MUSIC
        # the consulted leg outlives its bridge with the agent (parked), then hears the music
        switch_api(call, f"uuid_setvar {leg} park_after_bridge true")
        consult.swapped = True
        switch_api(call, f"uuid_transfer {agent} 'conference:{next_room(consult)}' inline")
        wait_parked(call, leg)
        switch_api(call, f"uuid_transfer {leg} 'endless_playback:{music}' inline")
        switch_api(call, f"uuid_break {call.call_id}")  # the caller's music: it joins the room
        return {"with": "caller"}
    consult.swapped = False
    # out of the room (it ends: the caller's session holds it with music again), then back
    # with the consulted party (its music broken by the bridge)
    switch_api(call, f"uuid_transfer {agent} '{PARK}' inline")
    switch_api(call, f"uuid_bridge {agent} {leg}")
    # as before the first swap: the agent hanging up ends the consulted leg with their bridge
    # (its hook breaks the caller's music); parked, it held its music for ever (real switch)
    switch_api(call, f"uuid_setvar {leg} park_after_bridge false")
    return {"with": "consulted"}


CONSULT_ACTIONS: dict[str, Callable[[LiveHandle, dict[str, Any], Requester], dict[str, Any]]] = {
    "consult": consult,
    "consult_complete": consult_complete,
    "consult_cancel": consult_cancel,
    "consult_swap": consult_swap,
    "consult_reject": consult_reject,
}
