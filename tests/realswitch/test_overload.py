"""Calls the controller cannot take are refused at once (503, so carriers fail over), never
left ringing; a channel left in the socket application with no session is hung up."""
from __future__ import annotations

import signal
import socket
import threading
import time

import pytest

from tests.realswitch.provision import poll
from tests.realswitch.sipp import answered_leg_in_socket

SETUP_DEADLINE_SECONDS = 5  # fs-conf/vars.xml controller_setup_deadline (default)


def _set_config(product, key, value):
    from app.config import set_value

    before = product.controller.log_text().count("runtime configuration loaded")
    set_value(key, value)
    assert poll(lambda: product.controller.log_text().count("runtime configuration loaded") > before,
                20), "the controller never reloaded its configuration"


def test_a_frozen_controller_cannot_leave_callers_ringing_the_switch_refuses_them_503(
        product, tenant, sipp, real_switch):
    number = tenant.number_for([{"verb": "pause", "length": 1}, {"verb": "hangup"}])
    product.controller.proc.send_signal(signal.SIGSTOP)  # accepts in the kernel, never serves
    try:
        result = sipp.call(number, calls=3, rate=10, trace_msg=True)
    finally:
        product.controller.proc.send_signal(signal.SIGCONT)
    assert result.statuses() == [503, 503, 503], result.errors
    ringing = result.final_response_seconds()
    assert len(ringing) == 3, result.messages[-2000:]
    # FreeSWITCH's scheduler runs whole seconds: the guard fires between N-1 and N s
    assert all(SETUP_DEADLINE_SECONDS - 1.2 < s < SETUP_DEADLINE_SECONDS + 1.5 for s in ringing), ringing
    # thawed, the controller first sheds for a moment (its loop was 5 s late), then serves
    assert poll(lambda: "overloaded" not in product.controller.log_tail(3), 5)
    time.sleep(1.5)  # scenario: the 1 s loop-lag window holding the freeze's late sample passes
    again = sipp.call(number)
    assert again.ok, again.errors


def test_calls_longer_than_the_setup_deadline_are_not_cut_by_it(tenant, sipp):
    number = tenant.number_for([{"verb": "pause", "length": SETUP_DEADLINE_SECONDS + 2},
                                {"verb": "hangup"}])
    result = sipp.call(number)
    assert result.ok, result.errors
    record = tenant.wait_record(number)[0]
    assert record["status"] == "completed"
    assert record["duration_ms"] >= (SETUP_DEADLINE_SECONDS + 1) * 1000


def test_an_overloaded_controller_turns_calls_away_with_503_at_once(product, tenant, sipp):
    number = tenant.number_for([{"verb": "pause", "length": 1}, {"verb": "hangup"}])
    _set_config(product, "controller.max_setups_in_flight", 0)  # every call is one too many
    try:
        result = sipp.call(number, calls=2, rate=10, trace_msg=True)
    finally:
        _set_config(product, "controller.max_setups_in_flight", 200)
    assert result.statuses() == [503, 503], result.errors
    ringing = result.final_response_seconds()
    assert len(ringing) == 2 and max(ringing) < 1.0, ringing  # at once, not after the guard
    assert "overloaded: turned away" in product.controller.log_text()
    assert tenant.records(number) == []  # never taken: the carrier's retry elsewhere is the call
    again = sipp.call(number)
    assert again.ok, again.errors


@pytest.fixture
def silent_listener():
    """A TCP server that accepts sockets and never says a word (a controller that lost them)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in accepted:
        conn.close()


def test_a_channel_left_in_the_socket_application_without_a_session_is_hung_up(
        real_switch, sipp, silent_listener, product):
    from app import limits

    with answered_leg_in_socket(real_switch, sipp, silent_listener, "orphan") as uuid:
        assert real_switch.channel_count() >= 1
        gone = poll(lambda: real_switch.channel_count() == 0,
                    limits.ORPHAN_GRACE_SECONDS + limits.ORPHAN_SWEEP_SECONDS + 10, 0.5)
        assert gone, real_switch.api("show channels")
    assert f"channel {uuid} waited in the socket application" in product.controller.log_text()
