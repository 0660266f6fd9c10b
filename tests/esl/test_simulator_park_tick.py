"""The simulator answers and runs queued apps as the real switch does (capture
realswitch_answer_park_tick, notes.md): before media, an application queued over the socket
waits for the park loop's next 20 ms tick; ``api uuid_answer`` answers at once."""
from __future__ import annotations

import time
import uuid

import gevent.event

from esl.outbound import OutboundConnection
from tests.simulator import Call, Timing

# A long tick makes the difference plain under any load: queued, the answer waits for the tick
# that follows the socket's connect (almost all of it); through the api it does not wait.
TICK = 0.5


def _timed_answer(outbound_server, simulate_call, answer) -> float:
    took: list[float] = []
    done = gevent.event.Event()

    def app(conn: OutboundConnection) -> None:
        try:
            conn.connect()
            conn.myevents()
            conn.linger()
            start = time.monotonic()
            answer(conn)
            took.append(time.monotonic() - start)
            conn.hangup("NORMAL_CLEARING")
            conn.wait_hangup_complete(timeout=5)
            conn.exit()
        finally:
            done.set()

    call = simulate_call(Call(uuid=str(uuid.uuid4()), timing=Timing(park_tick=TICK)),
                         outbound_server(app))
    assert done.wait(10)
    call.wait(10)
    assert call.events_named("CHANNEL_ANSWER"), "the call was answered"
    return took[0]


def test_given_a_ringing_socket_call_when_answer_is_a_queued_app_then_it_waits_for_the_park_tick(
        outbound_server, simulate_call):
    waited = _timed_answer(outbound_server, simulate_call, lambda c: c.execute("answer"))
    assert waited > TICK / 2, waited


def test_given_a_ringing_socket_call_when_answered_with_uuid_answer_then_it_does_not_wait_for_a_tick(
        outbound_server, simulate_call):
    waited = _timed_answer(outbound_server, simulate_call, lambda c: c.answer())
    assert waited < TICK / 2, waited
