"""What FreeSWITCH tells us about a finished leg: facts read from CHANNEL_HANGUP_COMPLETE.

Pure functions over the event's headers (``esl.protocol.Event`` or anything with ``get`` and
``variable``), so the rules are testable against the real wire captures without a database.
Times come from the microsecond ``*_uepoch`` variables (the second ``*_epoch`` ones would
round a 520 ms answer to 0 or 1 s); durations from ``billmsec``/``mduration`` when present.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

# Unanswered legs: hangup cause -> call status (answered legs are always 'completed').
_UNANSWERED_STATUS: dict[str, str] = {
    "USER_BUSY": "busy",
    "NO_ANSWER": "no-answer",
    "NO_USER_RESPONSE": "no-answer",
    "ALLOTTED_TIMEOUT": "no-answer",
    "PROGRESS_TIMEOUT": "no-answer",
    "ORIGINATOR_CANCEL": "canceled",
    "LOSE_RACE": "canceled",
    "PICKED_OFF": "canceled",
}

_HOLD_WINDOW = re.compile(r"\{(\d+),(\d+)\}")


class HeaderSource(Protocol):
    def get(self, name: str, default: str | None = None) -> str | None: ...
    def variable(self, name: str, default: str | None = None) -> str | None: ...


def _int(value: str | None) -> int:
    try:
        return int(value) if value not in (None, "") else 0
    except ValueError:
        return 0


def _at(uepoch: int) -> datetime | None:
    return datetime.fromtimestamp(uepoch / 1_000_000, tz=timezone.utc) if uepoch > 0 else None


@dataclass(frozen=True)
class HangupFacts:
    call_id: str
    direction: str                 # FreeSWITCH's view of this leg: inbound | outbound
    caller: str | None
    callee: str | None
    sip_call_id: str | None
    source_ip: str | None
    started_at: datetime
    answered_at: datetime | None
    bridged_at: datetime | None
    ended_at: datetime
    # start until answer (or until the end when never answered): what the caller waited.
    # Not progress->answer: on an A-leg FreeSWITCH stamps progress when a B-leg rings, which
    # can come after the A-leg's own answer (see the outbound_bridge capture).
    ring_ms: int
    talk_ms: int                   # answer until the end (FreeSWITCH billmsec)
    duration_ms: int               # start until the end (FreeSWITCH mduration)
    hold_count: int
    hold_ms: int
    hangup_cause: str
    hangup_cause_q850: int | None
    hangup_disposition: str | None  # sip_hangup_disposition: send_bye, recv_bye, recv_refuse, ...
    sip_status: int | None          # final SIP status of the leg when FreeSWITCH knows it

    @property
    def answered(self) -> bool:
        return self.answered_at is not None


def read_hangup(event: HeaderSource) -> HangupFacts:
    """Facts of one leg from its CHANNEL_HANGUP_COMPLETE event."""
    var = event.variable
    start = _int(var("start_uepoch"))
    answer = _int(var("answer_uepoch"))
    end = _int(var("end_uepoch")) or start
    bridge = _int(var("bridge_uepoch"))
    talk_ms = _int(var("billmsec")) if var("billmsec") is not None else (
        (end - answer) // 1000 if answer else 0)
    duration_ms = _int(var("mduration")) if var("mduration") is not None else (end - start) // 1000
    ring_ms = max(0, ((answer or end) - start) // 1000)
    windows = _HOLD_WINDOW.findall(var("hold_events") or "")
    hold_ms = _int(var("hold_accum_ms"))
    if not hold_ms and windows:
        hold_ms = sum(int(b) - int(a) for a, b in windows) // 1000
    cause = var("hangup_cause") or event.get("Hangup-Cause") or "NORMAL_CLEARING"
    q850 = var("hangup_cause_q850")
    sip_status = var("sip_term_status") or _sip_from_proto(var("proto_specific_hangup_cause"))
    return HangupFacts(
        call_id=event.get("Unique-ID") or var("uuid") or "",
        direction=var("direction") or event.get("Call-Direction") or "inbound",
        caller=event.get("Caller-Caller-ID-Number") or var("sip_from_user"),
        callee=event.get("Caller-Destination-Number") or var("sip_to_user"),
        sip_call_id=var("sip_call_id"),
        source_ip=var("sip_network_ip"),
        started_at=_at(start) or datetime.now(timezone.utc),
        answered_at=_at(answer),
        bridged_at=_at(bridge),
        ended_at=_at(end) or datetime.now(timezone.utc),
        ring_ms=ring_ms,
        talk_ms=max(0, talk_ms),
        duration_ms=max(0, duration_ms),
        hold_count=len(windows),
        hold_ms=max(0, hold_ms),
        hangup_cause=cause,
        hangup_cause_q850=_int(q850) if q850 else None,
        hangup_disposition=var("sip_hangup_disposition"),
        sip_status=_int(sip_status) or None,
    )


def _sip_from_proto(value: str | None) -> str | None:
    # proto_specific_hangup_cause looks like "sip:503"
    if value and value.startswith("sip:"):
        return value[4:]
    return None


def call_status(facts: HangupFacts, *, refused: bool = False) -> str:
    """One of app.models.enums.CALL_STATUSES. ``refused``: the platform turned the call away
    (concurrency limit) before handling it. Answered legs are 'completed' whatever the cause
    (a NORMAL_TEMPORARY_FAILURE after answer is a failed bridge, not a failed call)."""
    if refused:
        return "refused"
    if facts.answered:
        return "completed"
    status = _UNANSWERED_STATUS.get(facts.hangup_cause)
    if status:
        return status
    if facts.hangup_cause == "NORMAL_CLEARING":
        # an inbound caller who hangs up before we answer cancelled; an outbound leg
        # cleared before answer was not answered
        return "canceled" if facts.direction == "inbound" else "no-answer"
    return "failed"


@dataclass(frozen=True)
class ObservedHangup:
    """A leg's end as the controller itself saw it, for when FreeSWITCH's CHANNEL_HANGUP_COMPLETE
    never reaches us: an originate that failed before any channel came to our socket, or a call
    socket lost mid-call. Read by ``read_hangup`` like the real event (times in µs epoch)."""
    call_id: str
    caller: str | None
    callee: str | None
    direction: str
    hangup_cause: str
    started_us: int
    ended_us: int
    answered_us: int = 0

    def get(self, name: str, default: str | None = None) -> str | None:
        return {"Unique-ID": self.call_id, "Caller-Caller-ID-Number": self.caller,
                "Caller-Destination-Number": self.callee,
                "Hangup-Cause": self.hangup_cause}.get(name, default)

    def variable(self, name: str, default: str | None = None) -> str | None:
        values = {"start_uepoch": str(self.started_us), "end_uepoch": str(self.ended_us),
                  "answer_uepoch": str(self.answered_us), "hangup_cause": self.hangup_cause,
                  "direction": self.direction}
        return values.get(name, default)
