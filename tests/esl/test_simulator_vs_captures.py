"""The simulator, driven with each capture's own command sequence, must emit what FreeSWITCH did.

For every outbound capture the controller's recorded commands are replayed byte-for-byte
(waiting, before each command, for as many events as FreeSWITCH had sent at that point), and
the simulator's event sequence is compared with the capture's: order, names, key headers and
the non-variable header names of each event. This is what keeps the simulator from drifting.
"""
from __future__ import annotations

import gevent
import gevent.event
import pytest

from esl.errors import ConnectionLost
from esl.outbound import OutboundConnection
from esl.protocol import Event, iter_frames, parse_header_lines
from tests.esl.capture_replay import CAPTURES, outbound_captures, sent_commands
from tests.plugins.eventually import eventually
from tests.simulator import Call

KEY_HEADERS = ("Application", "Application-Response", "Hangup-Cause", "DTMF-Digit", "Action",
               "Record-File-Path", "Answer-State")
RACY = {"CHANNEL_PARK"}  # arrives after myevents or after the first sendmsg, or not at all


def _scenario(name: str) -> Call:
    park = any(e.name == "CHANNEL_PARK" for e in _capture_events(name))
    call = Call(caller="sipp", callee="9001", park_event=park)
    if name == "outbound_caller_hangs_up":
        call.media("tone_stream://%(20000,0,440)", 30).hangup_after(0.4)
        call.timing.linger_scale = 0.05
    elif name == "outbound_gather_dtmf":
        call.press("123#", after=0.05)
    elif name == "outbound_bridge":
        call.bridge_answers(talk=30).bridge_fails("NORMAL_TEMPORARY_FAILURE")
    elif name == "outbound_bridge_fail_continue":
        call.bridge_fails("NORMAL_TEMPORARY_FAILURE")
    elif name == "outbound_conference":
        call.hangup_after(0.4)
    return call


def _capture_events(name: str) -> list[Event]:
    raw = (CAPTURES / name / "received.raw").read_bytes()
    return [f.event() for f in iter_frames(raw) if f.content_type == "text/event-plain"]


def _signature(ev: Event) -> tuple:
    key = [ev.dispatch_key]
    if ev.name == "CHANNEL_STATE":
        key.append(ev.get("Channel-State"))
    key.extend(ev.get(h) for h in KEY_HEADERS)
    return tuple(key)


def _replay(conn: OutboundConnection, name: str, log: list) -> None:
    for cmd in sent_commands(name):
        # the capture sent this command after that many events: so does the replay
        eventually(lambda: conn.events_received >= cmd.events_before, timeout=5, interval=0.005,
                   what=f"{cmd.events_before} events before {cmd.text[:30]!r}")
        head, _, body = cmd.text.decode().partition("\n\n")
        line, _, header_text = head.partition("\n")
        headers = parse_header_lines(header_text, decode=False)
        try:
            log.append(conn.send_command(line, headers, body, timeout=5))
        except ConnectionLost:
            return
    conn.wait_closed(timeout=5)


@pytest.mark.parametrize("name", outbound_captures())
def test_given_capture_commands_when_replayed_against_simulator_then_event_sequence_matches(
        name, outbound_server, simulate_call):
    replies: list = []
    done = gevent.event.Event()

    def app(conn: OutboundConnection) -> None:
        try:
            _replay(conn, name, replies)
        finally:
            done.set()

    server = outbound_server(app)
    call = simulate_call(_scenario(name), server)
    assert done.wait(20)
    call.wait(10)

    expected = [e for e in _capture_events(name) if e.name not in RACY]
    got = [e for e in call.emitted if e.name not in RACY]
    assert [_signature(e) for e in got] == [_signature(e) for e in expected]
    # the same header names (variables aside) in the same order, event by event
    for mine, real in zip(got, expected):
        mine_names = [n for n, _ in mine.headers if not n.startswith("variable_")]
        real_names = [n for n, _ in real.headers if not n.startswith("variable_")]
        assert mine_names == real_names, f"{_signature(real)}"
        assert any(n.startswith("variable_") for n, _ in mine.headers) == \
            any(n.startswith("variable_") for n, _ in real.headers), f"{_signature(real)}"
    # the replies are the captured ones (Reply-Text of each command)
    real_replies = [f.reply_text for f in iter_frames((CAPTURES / name / "received.raw").read_bytes())
                    if f.content_type in ("command/reply",)]
    got_replies = [r.reply_text for r in replies if r.content_type == "command/reply"]
    assert got_replies == real_replies[: len(got_replies)]
