"""Header templates taken from the real FreeSWITCH 1.10.12 captures (tests/fixtures/esl_captures).

The simulator never invents header sets: the channel-data block, the channel header block of
events, the per-event ``Event-Calling-*`` values, which events carry ``variable_*`` headers, and
the variables FreeSWITCH adds at answer / hangup / hangup-complete all come from the captures.
"""
from __future__ import annotations

import functools
from pathlib import Path

from esl.protocol import Event, Frame, iter_frames

CAPTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "esl_captures"
BASE_CAPTURE = "outbound_answer_playback_hangup"

PREAMBLE = (
    "Event-Name", "Core-UUID", "FreeSWITCH-Hostname", "FreeSWITCH-Switchname", "FreeSWITCH-IPv4",
    "FreeSWITCH-IPv6", "Event-Date-Local", "Event-Date-GMT", "Event-Date-Timestamp",
    "Event-Calling-File", "Event-Calling-Function", "Event-Calling-Line-Number", "Event-Sequence",
)
CODEC_HEADERS = (
    "Channel-Read-Codec-Name", "Channel-Read-Codec-Rate", "Channel-Read-Codec-Bit-Rate",
    "Channel-Write-Codec-Name", "Channel-Write-Codec-Rate", "Channel-Write-Codec-Bit-Rate",
)

# Where each captured event family was first seen; the capture order gives preference.
CAPTURE_ORDER = (
    BASE_CAPTURE, "outbound_caller_hangs_up", "outbound_gather_dtmf", "outbound_record_session",
    "outbound_bridge", "outbound_bridge_fail_continue", "outbound_conference", "outbound_speak_flite",
    "inbound_hold_unhold", "inbound_originate_bgapi", "gateway_state", "reloadacl",
    "realswitch_hold_and_listen_failure",
)


@functools.lru_cache(maxsize=None)
def capture_frames(name: str) -> tuple[Frame, ...]:
    return tuple(iter_frames((CAPTURES_DIR / name / "received.raw").read_bytes()))


def capture_events(name: str) -> list[Event]:
    return [f.event() for f in capture_frames(name) if f.content_type == "text/event-plain"]


def _key(event: Event) -> str:
    key = event.dispatch_key or ""
    action = event.get("Action")
    return f"{key}:{action}" if action else key


@functools.lru_cache(maxsize=None)
def event_templates() -> dict[str, Event]:
    """First captured instance of every event family (conference keyed by Action)."""
    out: dict[str, Event] = {}
    for cap in CAPTURE_ORDER:
        for ev in capture_events(cap):
            out.setdefault(_key(ev), ev)
    return out


def template(key: str) -> Event:
    return event_templates()[key]


def calling(key: str) -> tuple[str, str, str]:
    """(Event-Calling-File, -Function, -Line-Number) as FreeSWITCH reports for that event."""
    ev = event_templates().get(key) or template("CHANNEL_STATE")
    return (ev.get("Event-Calling-File", ""), ev.get("Event-Calling-Function", ""),
            ev.get("Event-Calling-Line-Number", ""))


def carries_variables(key: str) -> bool:
    ev = event_templates().get(key)
    if ev is None:
        return True
    return any(n.startswith("variable_") for n, _ in ev.headers)


@functools.lru_cache(maxsize=None)
def channel_block_names() -> tuple[str, ...]:
    """The ordered channel header block of a hung-up channel (superset used for every event)."""
    ev = next(e for e in capture_events(BASE_CAPTURE) if e.name == "CHANNEL_HANGUP")
    names = [n for n, _ in ev.headers if n not in PREAMBLE and not n.startswith("variable_")]
    return tuple(names)


@functools.lru_cache(maxsize=None)
def base_channel_data() -> Event:
    """The base capture's ``connect`` reply (channel data + reply headers)."""
    return capture_frames(BASE_CAPTURE)[0].headers


def base_identity() -> dict[str, str]:
    data = base_channel_data()
    return {
        "uuid": data.get("Unique-ID", ""),
        "core_uuid": data.get("Core-UUID", ""),
        "caller": data.get("Caller-Caller-ID-Number", ""),
        "callee": data.get("Caller-Destination-Number", ""),
    }


@functools.lru_cache(maxsize=None)
def base_variables(stage: str) -> tuple[tuple[str, str], ...]:
    """Variables of the base call at a stage: data / answer / hangup / complete."""
    events = capture_events(BASE_CAPTURE)
    if stage == "data":
        src = base_channel_data()
    else:
        name = {"answer": "CHANNEL_ANSWER", "hangup": "CHANNEL_HANGUP",
                "complete": "CHANNEL_HANGUP_COMPLETE"}[stage]
        src = next(e for e in events if e.name == name)
    return tuple((n[len("variable_"):], v) for n, v in src.headers if n.startswith("variable_"))


def _is_channel_header(name: str) -> bool:
    return (name in channel_block_names() or name.startswith("Other-Leg-") or name == "Other-Type"
            or name.startswith("Caller-Callee-ID-"))


def split_extras(key: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The event-specific headers of a captured event: those before its channel block (head)
    and those after it (tail), in captured order, repeats included."""
    ev = template(key)
    head: list[tuple[str, str]] = []
    tail: list[tuple[str, str]] = []
    seen_channel = False
    for name, value in ev.headers:
        if name in PREAMBLE or name == "Event-Subclass" or name.startswith("variable_"):
            continue
        if _is_channel_header(name):
            seen_channel = True
            continue
        (tail if seen_channel else head).append((name, value))
    return head, tail
