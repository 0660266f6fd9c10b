"""The simulator's model of the legs an attended transfer moves around the caller
(app/voice/consult_actions.py): the agent's leg taken out of the caller's bridge by
``uuid_transfer … inline`` (parked), the consulted party's leg made by ``originate
… &intercept(<agent leg>)`` (rung on the scenario's next ``consult_rings`` phone), and the
caller's two-party ``conference`` with either (moved in by ``uuid_transfer``), or the
three-way room with both (the caller stays while another member does); when a room
ends with the caller in it, the caller is hung up unless ``hangup_after_conference=false``. Only what the
controller relies on is modelled: ``api_on_answer`` and ``api_hangup_hook`` run as api
commands on the caller's socket, a parked leg stays until killed or its phone hangs up.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import gevent
import gevent.event

if TYPE_CHECKING:
    from tests.simulator.outbound import SimOutboundCall

BRIDGE_RECHECK_SECONDS = 0.01  # how often a uuid_bridge watcher looks whether a move parted the legs
_VAR = re.compile(r"(\w+)=('[^']*'|[^,}]*)")


@dataclass
class SimLeg:
    """A leg of the call other than the caller's and its running bridge."""
    uuid: str
    phone: Any = None                      # the RingingPhone on the far end
    vars: dict[str, str] = field(default_factory=dict)
    partner: Optional[str] = None          # the leg it is bridged to (not the caller)
    answered: bool = False
    bridged_at: float = 0.0                # when its intercept has bridged its partner (monotonic)
    ended: gevent.event.Event = field(default_factory=gevent.event.Event)


def uuid_transfer(call: "SimOutboundCall", args: list[str], command: str) -> str:
    """``uuid_transfer <b-leg> '<apps>' inline``: the b-leg leaves the caller's bridge (which
    returns) and runs the apps; ``set:park_after_bridge=true`` is kept on it."""
    target = args[0] if args else ""
    if target in call.legs and call.legs[target].ended.is_set():  # hung up: the switch has no such leg
        call.legs.pop(target, None)
        return "-ERR No such channel!\n"
    if target in call.legs:  # a parked leg moved into a room, or out of its bridge (both park)
        call.legs[target].partner = None
        for other in call.legs.values():  # the leg it was bridged to parks (park_after_bridge)
            if other.partner == target:
                other.partner = None
        room = re.search(r"'conference:([^']+)'", command)
        for name in [name for name, member in call.rooms.items() if member == target]:
            del call.rooms[name]  # out of a two-party room: it ends (endconf)
        if room and "-3way@" in room.group(1):
            call.three_way.setdefault(room.group(1), set()).add(target)
        elif room and call.scenario.lose_room_move:  # accepted, but the leg never gets there
            call.scenario.lose_room_move = False
        elif room:
            call.rooms[room.group(1)] = target
        else:  # out of the caller's room: it ends (endconf), the caller's conference returns
            for name in [name for name, member in call.rooms.items() if member == target]:
                del call.rooms[name]
        call.controls.append(command)
        return "+OK\n"
    if target not in call._bridge_kill:
        return "-ERR No such channel!\n"
    leg = SimLeg(target, phone=call.bridge_phones.get(target))
    if "park_after_bridge=true" in command:
        leg.vars["park_after_bridge"] = "true"
    if leg.phone is not None:
        leg.phone.talking = leg.ended
    call.legs[target] = leg
    call.controls.append(command)
    call._bridge_kill[target].set()
    return "+OK\n"


def originate(call: "SimOutboundCall", command: str) -> str:
    """``originate {vars}<endpoint> &intercept(<leg>)``: rings the scenario's next consult phone.
    A routed number's ``[vars]`` of its first gateway are that leg's too (the first one answers)."""
    head, _, rest = command.partition("}")
    variables = dict((k, v.strip("'")) for k, v in _VAR.findall(head))
    if rest.startswith("["):
        variables.update(_VAR.findall(rest[1:].split("]", 1)[0]))
    leg_id = variables.get("origination_uuid", "")
    match = re.search(r"&intercept\(([0-9a-f-]{36})\)", command)
    call.controls.append(command)
    phone = call.consult_phones.pop(0) if call.consult_phones else None
    leg = SimLeg(leg_id, phone=phone, vars=variables, partner=match.group(1) if match else None)
    call.legs[leg_id] = leg
    call._greenlets.append(gevent.spawn(_ring, call, leg, int(variables.get("originate_timeout", "60"))))
    return "+OK\n"


def _ring(call: "SimOutboundCall", leg: SimLeg, timeout: int) -> None:
    phone = leg.phone
    if phone is not None:
        phone.b_leg_uuid = leg.uuid
        phone.ringing.set()
        deadline = time.monotonic() + timeout
        while not phone.decided.is_set() and not leg.ended.is_set() and time.monotonic() < deadline:
            phone.decided.wait(0.01)
        if phone.decided.is_set() and phone.cause is None and not leg.ended.is_set():
            leg.bridged_at = time.monotonic() + call.scenario.intercept_seconds
            leg.answered = True
            phone.talking = leg.ended
            if leg.vars.get("api_on_answer"):
                call._api(leg.vars["api_on_answer"])
            leg.ended.wait()
    call.legs.pop(leg.uuid, None)
    hook = leg.vars.get("api_hangup_hook")
    if hook:
        call._api(hook)


def bridge(call: "SimOutboundCall", args: list[str], command: str) -> str:
    """``uuid_bridge <a> <b>`` of two legs around the caller (a swap back to the consulted party)."""
    if len(args) < 2 or args[0] not in call.legs or args[1] not in call.legs:
        return "-ERR No such channel!\n"
    call.legs[args[0]].partner, call.legs[args[1]].partner = args[1], args[0]
    call.controls.append(command)
    call._greenlets.append(gevent.spawn(_bridged, call.legs[args[0]], call.legs[args[1]]))
    return "+OK\n"


def _bridged(a: SimLeg, b: SimLeg) -> None:
    """While ``uuid_bridge`` holds them together, one leg ending ends the bridge: the other
    is hung up, or parks when its ``park_after_bridge`` is true (as on the switch)."""
    while a.partner == b.uuid and b.partner == a.uuid:
        if a.ended.is_set() or b.ended.is_set():
            other = b if a.ended.is_set() else a
            other.partner = None
            if other.vars.get("park_after_bridge") != "true":
                other.ended.set()
            return
        # woken by either leg's end; the timeout only looks again whether a move parted them
        gevent.wait([a.ended, b.ended], count=1, timeout=BRIDGE_RECHECK_SECONDS)


def dump(call: "SimOutboundCall", leg_id: str) -> str:
    """``uuid_dump`` of a leg: parked (CS_PARK) once out of its bridge, as park_after_bridge does."""
    leg = call.legs[leg_id]
    now = time.monotonic()
    bridged = leg.partner is not None or any(other.partner == leg_id and other.answered and now >= other.bridged_at
                                             for other in call.legs.values())
    state = "CS_EXCHANGE_MEDIA" if bridged else "CS_PARK"
    return f"Unique-ID: {leg_id}\nChannel-State: {state}\n"


def kill(call: "SimOutboundCall", target: str, cause: str = "NORMAL_CLEARING") -> bool:
    leg = call.legs.pop(target, None)
    if leg is None:
        return False
    leg.ended.set()
    intercepted = call.legs.get(leg.partner or "")
    if leg.answered and time.monotonic() < leg.bridged_at and intercepted is not None:
        intercepted.ended.set()  # killed mid-intercept: the switch hangs the intercepted leg up too
    call.killed_legs.append(target)
    call.kill_causes[target] = cause
    for members in call.three_way.values():
        members.discard(target)
    return True


def setvar(call: "SimOutboundCall", args: list[str], command: str) -> Optional[str]:
    leg = call.legs.get(args[0]) if args else None
    if leg is None:
        return None
    value = command.split(None, 3)[3] if len(args) >= 3 else ""
    leg.vars[args[1]] = value
    return "+OK\n"


def getvar(call: "SimOutboundCall", args: list[str]) -> Optional[str]:
    leg = call.legs.get(args[0]) if args else None
    if leg is None:
        return None
    return leg.vars.get(args[1], "_undef_")


def app_conference(call: "SimOutboundCall", arg: str) -> Optional[tuple[str, dict]]:
    """``conference xfer-<leg>@…+flags{endconf}``: the caller meets the leg moved into that room
    (None for any other room: the plain conference model runs). Ends when either leaves; a
    caller whose leg never came (gone before it was moved in) waits alone until it hangs up,
    as on the real switch (an ``endconf`` room ends when such a member leaves, not before)."""
    if re.match(r"xfer-[0-9a-f-]+-3way@", arg):
        return _three_way(call, arg)
    match = re.match(r"xfer-[0-9a-f-]+@", arg)
    if match is None:
        return None
    leg = call.legs.get(call.rooms.get(arg, ""))
    call.rejoined.append(leg.uuid if leg is not None else "")
    if leg is None or leg.ended.is_set():  # nobody will join: alone in the room until kicked
        call.alone_in_room.set()
        while not call._interrupt.is_set() and not call.kicked.is_set():
            call._interrupt.wait(0.01)
        return "_none_", {}
    talks = _Talks(call, [leg] if leg is not None else [])
    while leg is not None and not leg.ended.is_set() and call.rooms.get(arg) == leg.uuid:
        if call._interrupt.wait(0.01):
            break
        talks.tick()
    if leg is not None and call.rooms.get(arg) == leg.uuid:  # not moved out: gone with the room
        call.rooms.pop(arg, None)
        call.legs.pop(leg.uuid, None)
    # the room ended (endconf) with the caller still in it: mod_conference hangs its members
    # up unless hangup_after_conference=false (seen on the real switch: mod_conference.c:800)
    if not call._interrupt.is_set() and call.channel.vars.get("hangup_after_conference") != "false":
        call._spawn_hangup("NORMAL_CLEARING", "")
    return "_none_", {}


def _three_way(call: "SimOutboundCall", arg: str) -> tuple[str, dict]:
    """The three-way room (``mintwo``): the caller stays while another member does; when it is
    alone the room ends (hung up unless hangup_after_conference=false)."""
    members = call.three_way.setdefault(arg, set())
    call.rejoined.append("3way")

    def others() -> int:
        return sum(1 for leg in list(members) if leg in call.legs and not call.legs[leg].ended.is_set())

    deadline = time.monotonic() + 5
    while not others() and time.monotonic() < deadline:  # the legs are moved in around the caller
        if call._interrupt.wait(0.01):
            break
    talks = _Talks(call, [call.legs[leg] for leg in list(members) if leg in call.legs])
    while others() and not call._interrupt.is_set():
        call._interrupt.wait(0.01)
        talks.tick()
    if not call._interrupt.is_set() and call.channel.vars.get("hangup_after_conference") != "false":
        call._spawn_hangup("NORMAL_CLEARING", "")
    return "_none_", {}


class _Talks:
    """The timed acts of a room the caller just joined: each consulted member's phone hangs up
    after its ``talk`` seconds, the caller after the scenario's ``room_hangup`` (once a call)."""

    def __init__(self, call: "SimOutboundCall", legs: list[SimLeg]) -> None:
        now = time.monotonic()
        self.call = call
        bridged = list(call.bridge_phones.values())  # their talk counts from their answer
        self.phones = [(leg.phone, now + leg.phone.talk) for leg in legs
                       if leg.phone is not None and not any(leg.phone is phone for phone in bridged)]
        seconds, call.scenario.room_hangup = call.scenario.room_hangup, None
        self.caller_at = now + seconds if seconds is not None else None

    def tick(self) -> None:
        now = time.monotonic()
        for phone, at in self.phones:
            if now >= at:
                phone.hangup()
        if self.caller_at is not None and now >= self.caller_at:
            self.caller_at = None
            self.call._spawn_hangup("NORMAL_CLEARING", "recv_bye")


def conference_api(call: "SimOutboundCall", args: list[str]) -> str:
    """``conference <room> list``: the transfer room's members (the leg moved in, when it is
    there and alive; the caller once it joined); ``conference <room> kick all``: the caller
    alone in a room is taken out (its ``conference`` returns)."""
    name = args[0] if args else ""
    keys = [key for key in call.rooms if key.split("@", 1)[0] == name]
    if args[1:2] == ["kick"]:
        call.kicked.set()
        return "+OK kicked\n"
    if args[1:2] != ["list"]:
        return "-ERR unsupported\n"
    legs = [call.legs.get(call.rooms[key]) for key in keys]
    members = [leg.uuid for leg in legs if leg is not None and not leg.ended.is_set()]
    if not members:
        return f"-ERR Conference {name} not found\n"
    return "".join(f"{i};sofia/internal/x;{uuid};x;x;hear|speak;0;0;100\n" for i, uuid in enumerate(members, 1))
