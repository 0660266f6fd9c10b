"""Scenarios as plain data: what the caller (and the far end) does during a simulated call.

    Call(caller="15551230000", callee="15557650000").press("12#", after=0.1).hangup_after(3.0)

Times are seconds. ``hangup_after``/``dtmf``/``hold``/``fault`` count from the ``connect``
command; ``hangup_in_room`` and a consulted ``RingingPhone``'s ``talk`` from the caller meeting
that party in a room (the agent's action, whenever the test sends it); ``press`` digits are typed ``after`` seconds into the next digit-collecting app
(play_and_get_digits), so gather tests do not race the controller.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Timing:
    """Realistic-but-fast defaults; raise them to mimic real media durations."""

    reply_delay: float = 0.0  # before each command/reply
    event_gap: float = 0.0  # between consecutive events of one step
    app_default: float = 0.002  # apps without a specific behaviour
    answer: float = 0.002
    # an app queued before media waits for the park loop's next tick (switch_ivr_park:
    # switch_yield(20000) between reads of the queue); 0 turns it off
    park_tick: float = 0.02
    # an app queued while media flows waits for the park loop's next frame read (the read
    # paces it at 20 ms): 0 (off, every older test's timing) runs it at once. With it on, a
    # ``uuid_break`` sent right after an app was queued lands before the app starts and is
    # lost (switch_core_session_exec clears CF_BREAK), as on the real switch
    media_tick: float = 0.0
    playback: float = 0.05  # default media length when no media() override
    speak: float = 0.05
    linger_scale: float = 1.0  # multiplies `linger N` before the final disconnect


@dataclass
class BridgeOutcome:
    """What the far end does for one ``bridge``: answer and talk, or fail with a cause."""

    answer: bool = True
    talk: float = 0.05
    cause: str = "NORMAL_TEMPORARY_FAILURE"
    sip_code: str = "503"
    b_leg_uuid: Optional[str] = None
    leg: int = 0  # which ``|`` leg of the bridge answers (the ones before it failed over)
    codecs: tuple[str, ...] = ()  # what the callee speaks (empty: anything offered)
    phone: Optional["RingingPhone"] = None  # rings until told (answer/decline) or leg_timeout


class RingingPhone:
    """A far end that rings until someone decides: ``answer()`` (then talks until a hang-up),
    ``decline()`` (603, CALL_REJECTED), ``busy()`` (486, USER_BUSY), or nothing (the bridge's ``leg_timeout`` ends it with
    NO_ANSWER). ``uuid_kill <b-leg> CAUSE`` while it rings ends it with CAUSE, and once
    answered ``hangup()`` ends the bridge. For tests whose "agent's phone" is driven from
    outside the call (the agent SDK's tests answer it when the agent accepts).

    ``talk``: seconds the answered phone talks with the caller, then it hangs up: from its
    answer when bridged to the caller; rung for a consultation (``consult_rings``), from the
    moment the caller meets it (in a completed transfer's room, or the three-way room)."""

    def __init__(self, talk: float = 3600.0) -> None:
        import gevent.event

        self.talk = talk
        self.decided = gevent.event.Event()
        self.cause: Optional[str] = None  # None: answered
        self.sip_code = ""
        self.ringing = gevent.event.Event()  # set when the bridge starts ringing it
        self.b_leg_uuid: Optional[str] = None
        self.talking = None  # the answered bridge's end event (set by the simulator)

    def answer(self) -> None:
        self.decided.set()

    def decline(self) -> None:
        self._end("CALL_REJECTED", "603")

    def busy(self) -> None:
        """A desk phone's "busy" (486, USER_BUSY), e.g. its Do Not Disturb."""
        self._end("USER_BUSY", "486")

    def hangup(self) -> None:
        """The answered phone hangs up (the bridge ends NORMAL_CLEARING)."""
        if self.talking is not None:
            self.talking.set()

    def _end(self, cause: str, sip_code: str) -> None:
        if not self.decided.is_set():
            self.cause, self.sip_code = cause, sip_code
            self.decided.set()


@dataclass
class Step:
    kind: str  # hangup | dtmf | hold | unhold | fault
    at: float
    arg: str = ""


@dataclass
class Call:
    caller: str = "15551230000"
    callee: str = "15557650000"
    uuid: Optional[str] = None
    variables: dict[str, str] = field(default_factory=dict)
    park_event: bool = True  # FreeSWITCH races a CHANNEL_PARK right after myevents (most captures)
    # the socket application's data after host:port, as mod_event_socket split it: without
    # "full" the switch refuses api/linger/event...; without "async" the socket is "static"
    socket_args: tuple[str, ...] = ("async", "full")
    timing: Timing = field(default_factory=Timing)
    steps: list[Step] = field(default_factory=list)
    presses: list[tuple[str, float, float]] = field(default_factory=list)
    bridges: list[BridgeOutcome] = field(default_factory=list)
    consult_phones: list["RingingPhone"] = field(default_factory=list)  # rung by originate (consult)
    media_seconds: dict[str, float] = field(default_factory=dict)
    hangup_cause: str = "NORMAL_CLEARING"
    codec: str = "PCMU"  # the codec the caller's leg negotiated (offered first to a bridged leg)
    missing_modules: frozenset[str] = frozenset()  # modules of modules.conf.xml the switch lacks
    listen_fails: Optional[str] = None  # mod_audio_fork connect_failed reason (None: connects)
    speech: str = ""                    # what pocketsphinx recognises in play_and_detect_speech
    # dialplan/public.xml arms ``sched_hangup +N`` before ``socket``: unless the controller
    # sends ``api sched_del <uuid>`` within N seconds, the switch refuses the call (503).
    # None: a leg that did not come through that dialplan (e.g. an originated leg).
    setup_guard: Optional[float] = 5.0
    # the answering-machine detection (mod_amd, mod_avmd) of an answered leg: ``amd`` completes
    # after ``amd_seconds`` with amd_result/amd_cause ``greeting``; ``avmd_start`` reports
    # avmd::beep ``beep_after`` seconds after it started (None: a greeting without a beep);
    # ``detect_silence`` returns ``beep_rest`` seconds after it started (the rest of the beep
    # after avmd's report, plus the silent frames it counts)
    greeting: tuple[str, str] = ("HUMAN", "HUMAN")
    amd_seconds: float = 0.05
    beep_after: Optional[float] = None
    beep_rest: float = 0.0
    # seconds the caller talks once it meets a consulted party or its agent again in a room (an
    # attended transfer's completion or swap), then it hangs up (None: it stays)
    room_hangup: Optional[float] = None
    # the next leg moved into a transfer room never gets there although the switch accepted the
    # move (a move lost on the real switch: the leg left silent in CS_ROUTING); ``loses_room_move``
    lose_room_move: bool = False
    # how long a consulted leg's ``intercept`` of the agent's parked leg takes after its answer:
    # the agent's leg is bridged (CS_EXCHANGE_MEDIA) only then, and the consulted leg killed
    # before then takes the agent's leg with it (as on the real switch); ``intercept_takes``
    intercept_seconds: float = 0.0

    # -- builders (each returns self so a scenario reads like a call) -------------------------
    def press(self, digits: str, after: float = 0.05, gap: float = 0.02) -> "Call":
        self.presses.append((digits, after, gap))
        return self

    def dtmf(self, digits: str, at: float) -> "Call":
        self.steps.append(Step("dtmf", at, digits))
        return self

    def hangup_after(self, seconds: float, cause: str = "NORMAL_CLEARING") -> "Call":
        self.steps.append(Step("hangup", seconds, cause))
        return self

    def hangup_in_room(self, seconds: float) -> "Call":
        """The caller hangs up ``seconds`` after it meets the party of an attended transfer in a
        room (tests/simulator/consult.py), whenever the agent completes it."""
        self.room_hangup = seconds
        return self

    def intercept_takes(self, seconds: float) -> "Call":
        """A consulted leg's ``intercept`` bridges the agent's leg ``seconds`` after its answer."""
        self.intercept_seconds = seconds
        return self

    def loses_room_move(self) -> "Call":
        """The next leg moved into a transfer room is accepted (+OK) but never joins it."""
        self.lose_room_move = True
        return self

    def hold(self, at: float, duration: float) -> "Call":
        self.steps.append(Step("hold", at))
        self.steps.append(Step("unhold", at + duration))
        return self

    def bridge_answers(self, talk: float = 0.05, b_leg_uuid: Optional[str] = None, leg: int = 0,
                       codecs: tuple[str, ...] = ()) -> "Call":
        self.bridges.append(BridgeOutcome(answer=True, talk=talk, b_leg_uuid=b_leg_uuid, leg=leg,
                                          codecs=codecs))
        return self

    def bridge_rings(self, phone: "RingingPhone") -> "Call":
        """The next bridge rings ``phone`` until it is answered, declined or times out."""
        self.bridges.append(BridgeOutcome(answer=True, talk=phone.talk, phone=phone))
        return self

    def consult_rings(self, phone: "RingingPhone") -> "Call":
        """The next ``originate`` (an agent's consultation) rings ``phone``."""
        self.consult_phones.append(phone)
        return self

    def bridge_fails(self, cause: str = "NORMAL_TEMPORARY_FAILURE", sip_code: str = "503") -> "Call":
        self.bridges.append(BridgeOutcome(answer=False, cause=cause, sip_code=sip_code))
        return self

    def answered_by(self, result: str, cause: str, *, after: float = 0.05,
                    beep_after: Optional[float] = None, beep_rest: float = 0.0) -> "Call":
        """What mod_amd decides (``MACHINE``, ``MAXWORDS``) ``after`` seconds into ``amd``, when
        mod_avmd hears the beep (seconds after ``avmd_start``; None: never), and how long the line
        stays loud after that report (``detect_silence`` returns then). Measured on the real switch
        (tests/realswitch/test_campaign_amd.py): HUMAN/HUMAN at 1.49 s, MACHINE/MAXWORDS at 1.83 s,
        the beep 4.86 s after avmd_start, its end heard (the 0.5 s beep over, then
        120 ms of quiet) about 0.55 s after that report."""
        self.greeting, self.amd_seconds, self.beep_after = (result, cause), after, beep_after
        self.beep_rest = beep_rest
        return self

    def media(self, path: str, seconds: float) -> "Call":
        self.media_seconds[path] = seconds
        return self

    def fault(self, kind: str, at: float) -> "Call":
        """``drop`` (close TCP), ``stall`` (stop answering), ``garbage`` (bad frame)."""
        if kind not in ("drop", "stall", "garbage"):
            raise ValueError(f"unknown fault {kind!r}")
        self.steps.append(Step("fault", at, kind))
        return self
