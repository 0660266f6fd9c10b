"""The live actions of a three-way call (docs/agents.md "Three-way calls"): ``conference``
(the agent adds the party it consults to a call with its caller; on the agent channel and
``POST /api/calls/:callId/actions``),
``conference_leave`` (the agent leaves; the others stay connected) and ``conference_end`` (end
all), agent channel only. Run like every live action on the controller driving the caller's call
(app/voice/live_control.py), one at a time per call.

FreeSWITCH 1.10 mapping:

| action | commands | why |
|---|---|---|
| conference | ``uuid_setvar <leg> api_hangup_hook`` (unset), ``uuid_setvar <leg> park_after_bridge true``, ``uuid_transfer <agent leg> 'conference:<room>' inline``, ``uuid_dump <leg>`` until parked, the same transfer for ``<leg>``, ``uuid_break <caller>`` | the agent leaves its bridge with the consulted party (or its swap room, which ends) for the three-way room; the consulted leg, parked as its bridge ends, follows; the caller's music is broken and its session joins the room (app/verbs/three_way.py). Room flags ``mintwo``: it ends once fewer than two remain |
| conference_leave | for a number ``uuid_getvar <leg> lcr_carrier_id`` / ``lcr_gateway_id`` (the call record's carrier), ``uuid_kill <agent leg>`` | the agent's leg leaves; two remain: the caller and the consulted party keep talking |
| conference_end | ``uuid_kill`` of both other legs, the caller hung up (``sendmsg`` hangup) | end all |
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from app.calls.consult import CONFERENCE, Consult
from app.calls.interaction_times import utc_now
from app.events.payloads import call_conference_left, call_conferenced
from app.verbs.consult_hold import three_way_room
from app.voice.consult_actions import consulting, ensure_talking, record_carrier, wait_parked
from app.voice.live_actions import LiveHandle, Refused, Requester, ensure_alive, hang_up_caller, switch_api
from esl.errors import EslError

log = logging.getLogger(__name__)

# why the caller's call ended when the agent ended the three-way call (the record's hangup_reason)
THREE_WAY_ENDED_REASON = "three_way_ended"


def consult_conference(call: LiveHandle, _params: dict[str, Any], by: Requester) -> dict[str, Any]:
    """The agent adds the consulted party (who has answered) to a call with its caller."""
    consult = consulting(call)
    ensure_talking(call, consult)
    room = three_way_room(consult)
    # its hangup no longer ends a consultation: two others may stay in the room
    switch_api(call, f"uuid_setvar {consult.consult_leg} api_hangup_hook")
    switch_api(call, f"uuid_setvar {consult.consult_leg} park_after_bridge true")
    consult.outcome = CONFERENCE
    swapped, consult.swapped = consult.swapped, False
    switch_api(call, f"uuid_transfer {consult.agent_leg} 'conference:{room}' inline")
    if not swapped:  # it was bridged to the agent: parked as that bridge ends (else: on music)
        wait_parked(call, consult.consult_leg)
    switch_api(call, f"uuid_transfer {consult.consult_leg} 'conference:{room}' inline")
    _quiet(call, f"uuid_break {call.call_id}")  # the caller's music (swapped: its room already ended)
    call.emit("call.conferenced", call_conferenced(call.call_id, agent_id=consult.from_agent,
                                                   to=consult.target.as_dict(), by=by))
    return {"to": consult.target.as_dict()}


def _three_way(call: LiveHandle) -> Consult:
    ensure_alive(call)
    consult = call.ctx.consult
    if consult is None or consult.outcome != CONFERENCE:
        raise Refused("not_in_three_way", "The agent is not in a three-way call.")
    return consult


def conference_leave(call: LiveHandle, _params: dict[str, Any], by: Requester) -> dict[str, Any]:
    """The agent leaves the three-way call; the caller and the consulted party stay connected."""
    consult = _three_way(call)
    if consult.left:
        raise Refused("not_in_three_way", "The agent has already left the three-way call.")
    record_carrier(call, consult)  # a number: the caller now talks through its carrier
    at = utc_now()
    consult.left_at = at
    _quiet(call, f"uuid_kill {consult.agent_leg} NORMAL_CLEARING")
    if consult.on_leave is not None:  # else the session does it as it joins (app/verbs/three_way.py)
        consult.on_leave(at)
    call.emit("call.conference.left", call_conference_left(call.call_id, agent_id=consult.from_agent,
                                                           to=consult.target.as_dict(), by=by, at=at))
    return {"to": consult.target.as_dict()}


def conference_end(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    """End all: the consulted party, the agent and the caller are hung up."""
    consult = _three_way(call)
    for leg in (consult.consult_leg, consult.agent_leg):
        _quiet(call, f"uuid_kill {leg} NORMAL_CLEARING")
    return hang_up_caller(call, THREE_WAY_ENDED_REASON)


def _quiet(call: LiveHandle, command: str) -> None:
    try:
        call.conn.api(command)
    except EslError as exc:  # the leg is already gone
        log.info("call %s: %s not done (%s)", call.call_id, command.split()[0], exc)


THREE_WAY_ACTIONS: dict[str, Callable[[LiveHandle, dict[str, Any], Requester], dict[str, Any]]] = {
    "conference": consult_conference,  # also a REST live action (a supervisor's tool)
    "conference_leave": conference_leave,
    "conference_end": conference_end,
}
