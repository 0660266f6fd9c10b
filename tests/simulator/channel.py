"""State of one simulated channel and the rendering of its events in FreeSWITCH's exact layout.

An event is: preamble (Event-Subclass first for CUSTOM) + head extras (e.g. Bridge-*) + the
channel block (from this channel's state) + variables (for event families that carry them) +
tail extras (Application-*, DTMF-*, Record-*), which is the layout of every captured event.
"""
from __future__ import annotations

import itertools
import time
import uuid as _uuid
from typing import Iterable, Optional

from esl.protocol import encode_event_plain, fs_url_encode
from tests.simulator import templates as T

_SEQ = itertools.count(1000)
CORE_UUID = str(_uuid.uuid4())

STATE_NUMBERS = {"CS_NEW": "0", "CS_INIT": "1", "CS_ROUTING": "2", "CS_SOFT_EXECUTE": "3",
                 "CS_EXECUTE": "4", "CS_EXCHANGE_MEDIA": "5", "CS_PARK": "6",
                 "CS_CONSUME_MEDIA": "7", "CS_HIBERNATE": "8", "CS_RESET": "9", "CS_HANGUP": "10",
                 "CS_REPORTING": "11", "CS_DESTROY": "12"}
Q850 = {"NORMAL_CLEARING": "16", "USER_BUSY": "17", "NO_ANSWER": "19", "NO_USER_RESPONSE": "18",
        "CALL_REJECTED": "21", "NORMAL_TEMPORARY_FAILURE": "41", "ORIGINATOR_CANCEL": "487",
        "UNALLOCATED_NUMBER": "1", "RECOVERY_ON_TIMER_EXPIRE": "102", "MANAGER_REQUEST": "16"}


def _now_us() -> int:
    return int(time.time() * 1_000_000)


def _stamp(us: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(us / 1_000_000))


def preamble(event_name: str, key: Optional[str] = None, subclass: Optional[str] = None
             ) -> list[tuple[str, str]]:
    now = _now_us()
    cfile, cfunc, cline = T.calling(key or event_name)
    head = [("Event-Subclass", subclass)] if subclass else []
    return head + [
        ("Event-Name", event_name), ("Core-UUID", CORE_UUID), ("FreeSWITCH-Hostname", "vm"),
        ("FreeSWITCH-Switchname", "vm"), ("FreeSWITCH-IPv4", "192.0.2.2"),
        ("FreeSWITCH-IPv6", "fd00::2"), ("Event-Date-Local", _stamp(now)),
        ("Event-Date-GMT", time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now / 1e6))),
        ("Event-Date-Timestamp", str(now)), ("Event-Calling-File", cfile),
        ("Event-Calling-Function", cfunc), ("Event-Calling-Line-Number", cline),
        ("Event-Sequence", str(next(_SEQ))),
    ]


class SimChannel:
    """One call leg: identity, state headers and ordered variables."""

    def __init__(self, caller: str, callee: str, uuid: Optional[str] = None,
                 variables: Optional[dict[str, str]] = None) -> None:
        self.uuid = uuid or str(_uuid.uuid4())
        self.caller = caller
        self.callee = callee
        ident = T.base_identity()
        self._subst = [(ident["uuid"], self.uuid), (ident["core_uuid"], CORE_UUID),
                       (f"{ident['caller']}@", f"{caller}@"), (f"{ident['callee']}@", f"{callee}@")]
        self._ident = ident
        data = T.base_channel_data()
        self.headers: dict[str, str] = {}
        for name in T.channel_block_names():
            self.headers[name] = self._identity(name, data.get(name, data.get(name.replace("Caller-", "Channel-", 1), "")))
        self.created_us = _now_us()
        # ``show channels`` columns of the running application (a call in the ``socket`` app
        # shows ``socket`` / ``host:port async full``); tests set them, empty otherwise
        self.application = ""
        self.application_data = ""
        for name in ("Caller-Profile-Created-Time", "Caller-Channel-Created-Time"):
            self.headers[name] = str(self.created_us)
        self.vars: dict[str, str] = {}
        for name, value in T.base_variables("data"):
            self.vars[name] = self._identity("variable_" + name, value)
        self.vars.update(variables or {})
        self.state = "CS_EXECUTE"
        self.call_state = "RINGING"
        self.answer_state = "ringing"
        self.hangup_cause: Optional[str] = None
        self.media = False
        self.answered_us = 0
        self.progress_media_us = 0
        self.hangup_us = 0
        self.last_app = ""
        self.last_arg = ""
        self.last_response = ""
        self.hold_start_us = 0
        self.hold_accum_us = 0
        self.hold_events: list[tuple[int, int]] = []
        # After a bridge FreeSWITCH keeps the callee id and the originatee profile
        # (Other-Type, Other-Leg-*) in every later event's channel block.
        self.callee_id: Optional[tuple[str, str]] = None
        self.other_leg: list[tuple[str, str]] = []

    # -- identity substitution -----------------------------------------------------------------
    def _identity(self, name: str, value: str) -> str:
        if value == self._ident["caller"] and ("Caller-ID" in name or "Username" in name
                                               or name.endswith("ANI") or "from_user" in name
                                               or "contact_user" in name or "from_display" in name):
            return self.caller
        if value == self._ident["callee"] and ("Destination" in name or "to_user" in name
                                               or "req_user" in name or "to_display" in name):
            return self.callee
        for old, new in self._subst:
            if old and old in value:
                value = value.replace(old, new)
        return value

    # -- state transitions ---------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        self.state = state

    def pre_answer(self) -> None:
        self.media = True
        self.call_state = "EARLY"
        self.answer_state = "early"
        self.progress_media_us = _now_us()
        self.headers["Caller-Channel-Progress-Media-Time"] = str(self.progress_media_us)
        self._add_stage_vars("answer")

    def answer(self) -> None:
        if not self.media:
            self.pre_answer()
        self.call_state = "ACTIVE"
        self.answer_state = "answered"
        self.answered_us = _now_us()
        self.headers["Caller-Channel-Answered-Time"] = str(self.answered_us)

    def hold(self) -> None:
        self.call_state = "HELD"
        self.hold_start_us = _now_us()
        self.headers["Caller-Channel-Last-Hold"] = str(self.hold_start_us)

    def unhold(self) -> None:
        end = _now_us()
        self.hold_accum_us += end - self.hold_start_us
        self.hold_events.append((self.hold_start_us, end))
        self.call_state = "UNHELD"
        self.headers["Caller-Channel-Hold-Accum"] = str(self.hold_accum_us)
        self.vars["hold_accum_seconds"] = str(self.hold_accum_us // 1_000_000)
        self.vars["hold_accum_ms"] = str(self.hold_accum_us // 1000)
        self.vars["hold_events"] = "{" + ",".join("{%d,%d}" % ev for ev in self.hold_events) + "}"
        self.vars["last_hold_epoch"] = str(self.hold_start_us // 1_000_000)

    def hangup(self, cause: str, disposition: str) -> None:
        self.hangup_cause = cause
        self.call_state = "HANGUP"
        self.answer_state = "hangup"
        self.hangup_us = _now_us()
        self.headers["Caller-Channel-Hangup-Time"] = str(self.hangup_us)
        self._add_stage_vars("hangup")
        self.vars["sip_hangup_disposition"] = disposition

    def finalize_vars(self) -> None:
        """The CDR-style variables FreeSWITCH adds for CHANNEL_HANGUP_COMPLETE, computed."""
        self._add_stage_vars("complete")
        end = self.hangup_us or _now_us()
        start = self.created_us
        ans = self.answered_us
        bill = (end - ans) if ans else 0
        total = end - start
        cause = self.hangup_cause or "NORMAL_CLEARING"
        v = self.vars
        v.update({
            "hangup_cause": cause, "hangup_cause_q850": Q850.get(cause, "16"),
            "start_stamp": _stamp(start), "profile_start_stamp": _stamp(start),
            "answer_stamp": _stamp(ans) if ans else "", "end_stamp": _stamp(end),
            "start_epoch": str(start // 1_000_000), "start_uepoch": str(start),
            "profile_start_epoch": str(start // 1_000_000), "profile_start_uepoch": str(start),
            "answer_epoch": str(ans // 1_000_000), "answer_uepoch": str(ans),
            "end_epoch": str(end // 1_000_000), "end_uepoch": str(end),
            "progress_media_epoch": str(self.progress_media_us // 1_000_000),
            "progress_media_uepoch": str(self.progress_media_us),
            "hold_accum_seconds": str(self.hold_accum_us // 1_000_000),
            "hold_accum_usec": str(self.hold_accum_us), "hold_accum_ms": str(self.hold_accum_us // 1000),
            "last_app": self.last_app, "last_arg": self.last_arg,
            "caller_id": f'"{self.caller}" <{self.caller}>',
            "duration": str(round(total / 1e6)), "billsec": str(round(bill / 1e6)),
            "answersec": str(round((ans - start) / 1e6)) if ans else "0",
            "mduration": str(total // 1000), "billmsec": str(bill // 1000),
            "answermsec": str((ans - start) // 1000) if ans else "0",
            "uduration": str(total), "billusec": str(bill),
            "flow_billsec": str(round(total / 1e6)), "flow_billmsec": str(total // 1000),
            "flow_billusec": str(total),
        })
        if not ans:
            v.pop("answer_stamp", None)

    def _add_stage_vars(self, stage: str) -> None:
        for name, value in T.base_variables(stage):
            if name not in self.vars:
                self.vars[name] = self._identity("variable_" + name, value)

    # -- rendering -----------------------------------------------------------------------------
    def channel_block(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for name in T.channel_block_names():
            if name == "Hangup-Cause":
                if self.hangup_cause:
                    out.append((name, self.hangup_cause))
                continue
            if name in T.CODEC_HEADERS and not self.media:
                continue
            if name == "Channel-State":
                value = self.state
            elif name == "Channel-State-Number":
                value = STATE_NUMBERS.get(self.state, "4")
            elif name == "Channel-Call-State":
                value = self.call_state
            elif name == "Answer-State":
                value = self.answer_state
            else:
                value = self.headers.get(name, "")
            out.append((name, value))
            if name == "Caller-Orig-Caller-ID-Number" and self.callee_id:
                out.append(("Caller-Callee-ID-Name", self.callee_id[0]))
                out.append(("Caller-Callee-ID-Number", self.callee_id[1]))
        out.extend(self.other_leg)
        return out

    def event_headers(self, event_name: str, *, head: Iterable[tuple[str, str]] = (),
                      tail: Iterable[tuple[str, str]] = (), subclass: Optional[str] = None,
                      key: Optional[str] = None, with_vars: Optional[bool] = None,
                      extra_vars: Optional[dict[str, str]] = None) -> list[tuple[str, str]]:
        key = key or (subclass if subclass else event_name)
        headers = preamble(event_name, key, subclass)
        if event_name == "CHANNEL_HANGUP_COMPLETE" and self.hangup_cause:
            headers.append(("Hangup-Cause", self.hangup_cause))
        headers.extend(head)
        headers.extend(self.channel_block())
        if with_vars is None:
            with_vars = T.carries_variables(key)
        if with_vars:
            merged = dict(self.vars)
            merged.update(extra_vars or {})
            headers.extend(("variable_" + n, v) for n, v in merged.items())
        headers.extend(tail)
        return headers

    def event(self, event_name: str, **kw) -> bytes:
        return encode_event_plain(self.event_headers(event_name, **kw))

    def connect_reply(self, *, async_mode: bool = True, full: bool = True) -> bytes:
        """The ``connect`` reply: channel data header block then reply headers, no Content-Length."""
        data = T.base_channel_data()
        lines = []
        for name, value in data.headers:
            if name in ("Content-Type", "Reply-Text", "Socket-Mode", "Control"):
                continue
            if name == "Unique-ID" or name.endswith("Unique-ID") or name == "Channel-Call-UUID":
                value = self.uuid
            elif name == "Core-UUID":
                value = CORE_UUID
            elif name == "Answer-State":  # an originated leg reaches the socket answered
                value = self.answer_state
            elif name == "Channel-Call-State":
                value = self.call_state
            elif name.startswith("variable_"):
                value = self.vars.get(name[len("variable_"):], self._identity(name, value))
            else:
                value = self._identity(name, value)
            lines.append(f"{name}: {fs_url_encode(value)}\n")
        # Variables the scenario added that the template block does not have.
        known = {n for n, _ in data.headers}
        for name, value in self.vars.items():
            if "variable_" + name not in known:
                lines.append(f"variable_{name}: {fs_url_encode(value)}\n")
        lines.append("Content-Type: command/reply\nReply-Text: %2BOK%0A\n"
                     f"Socket-Mode: {'async' if async_mode else 'static'}\n"
                     f"Control: {'full' if full else 'single-channel'}\n\n")
        return "".join(lines).encode("utf-8")
