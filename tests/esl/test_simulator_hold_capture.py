"""The simulator against the project's own real-switch capture realswitch_hold_and_listen_failure
(see its notes.md): park refused under socket control, and mod_audio_fork's connect_failed
event as the switch sends it (only when subscribed, same headers, the reason in the body)."""
from __future__ import annotations

import json
import uuid

import gevent.event

from esl.outbound import OutboundConnection
from esl.protocol import Event, iter_frames
from tests.esl.capture_replay import CAPTURES
from tests.plugins.eventually import eventually
from tests.simulator import Call

CAPTURE = "realswitch_hold_and_listen_failure"


def _captured() -> list[Event]:
    raw = (CAPTURES / CAPTURE / "received.raw").read_bytes()
    return [f.event() for f in iter_frames(raw) if f.content_type == "text/event-plain"]


def _names(event: Event) -> list[str]:
    return [n for n, _ in event.headers if not n.startswith("variable_")]


def _run(outbound_server, simulate_call, subscribe: bool) -> list[Event]:
    done = gevent.event.Event()

    def app(conn: OutboundConnection) -> None:
        try:
            conn.connect()
            conn.myevents()
            failed: list[Event] = []
            if subscribe:
                conn.subscribe("mod_audio_fork::connect_failed")
                conn.on("mod_audio_fork::connect_failed", failed.append)
            conn.linger()
            conn.execute("answer")
            conn.execute("park")
            conn.api(f"uuid_audio_fork {conn.uuid} start ws://127.0.0.1:9/x mixed 8k {{}}")
            if subscribe:
                eventually(lambda: failed, timeout=5, what="mod_audio_fork::connect_failed")
            else:
                # scenario: the fork's outcome comes ~10 ms after +OK; 0.2 s gives an
                # unsubscribed connect_failed the time to (wrongly) arrive
                gevent.sleep(0.2)
            conn.hangup("NORMAL_CLEARING")
            conn.wait_hangup_complete(timeout=5)
            conn.exit()
        finally:
            done.set()

    call = simulate_call(Call(uuid=str(uuid.uuid4()), park_event=False, listen_fails="conn fail: 111"),
                         outbound_server(app))
    assert done.wait(10)
    call.wait(10)
    return call.emitted


def _around_park(events: list[Event]) -> list[str]:
    start = next(i for i, e in enumerate(events) if e.get("Application") == "park")
    return [e.dispatch_key for e in events[start:start + 3]]


def test_given_park_under_socket_control_then_it_completes_at_once_without_channel_park(
        outbound_server, simulate_call):
    real = _captured()
    got = _run(outbound_server, simulate_call, subscribe=True)
    for events in (real, got):
        assert _around_park(events)[:2] == ["CHANNEL_EXECUTE", "CHANNEL_EXECUTE_COMPLETE"]
        assert "CHANNEL_PARK" not in [e.name for e in events]


def test_given_audio_fork_cannot_connect_then_connect_failed_matches_the_switch(
        outbound_server, simulate_call):
    (real,) = [e for e in _captured() if e.dispatch_key == "mod_audio_fork::connect_failed"]
    got = [e for e in _run(outbound_server, simulate_call, subscribe=True)
           if e.dispatch_key == "mod_audio_fork::connect_failed"]
    assert len(got) == 1
    assert _names(got[0]) == _names(real)
    assert json.loads(got[0].body) == json.loads(real.body) == {"reason": "conn fail: 111"}


def test_given_no_subscription_then_connect_failed_is_not_delivered(outbound_server, simulate_call):
    got = _run(outbound_server, simulate_call, subscribe=False)
    assert [e for e in got if e.dispatch_key == "mod_audio_fork::connect_failed"] == []
