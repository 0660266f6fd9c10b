"""The controller SIGKILLed while the real switch carries answered calls: FreeSWITCH ends the
channels whose sockets dropped, the next controller records every one of them (connection_lost,
call.failed, call.ended), and serves new calls. Times are printed for the issue notes."""
from __future__ import annotations

import signal
import time

from tests.realswitch.provision import poll

CALLS = 3


def _ids(tenant, key: str, number: str | None = None) -> set[str]:
    return {e["payload"]["callId"] for e in tenant.events(key)
            if number is None or e["payload"].get("to") == number}


def test_a_controller_killed_mid_call_is_replaced_and_its_calls_are_recorded(
        product, tenant, sipp, real_switch):
    number = tenant.number_for([{"verb": "say", "text": "Please hold the line."},
                                {"verb": "pause", "length": 40}, {"verb": "hangup"}])
    callers = sipp.start_calls(number, calls=CALLS, rate=10)
    started = poll(lambda: (ids := _ids(tenant, "call.started", number)) and len(ids) >= CALLS and ids, 20)
    poll(lambda: started <= _ids(tenant, "call.answered"), 20)
    time.sleep(1.0)  # scenario: talk time the record must not lose

    killed = time.monotonic()
    product.controller.stop(sig=signal.SIGKILL)
    try:
        poll(lambda: real_switch.channel_count() == 0, 15)
        channels_gone = time.monotonic() - killed
        callers.wait(30)  # FreeSWITCH sent each caller its BYE
        assert tenant.records(number) == [], "nobody recorded them while the controller was dead"
    finally:
        restart = time.monotonic()
        product.start_controller(wait=True)
    serving = time.monotonic() - restart
    records = tenant.wait_record(number, count=CALLS, timeout=30)
    recorded = time.monotonic() - restart
    print(f"\nreal switch: channels gone {channels_gone:.2f}s after SIGKILL; controller serving "
          f"{serving:.2f}s after start; {CALLS} lost calls recorded {recorded:.2f}s after start")
    assert {str(r["call_id"]) for r in records} == started
    for record in records:
        assert record["status"] == "completed"
        assert record["hangup_reason"] == "connection_lost"
        # billed until the new controller started at the latest, not just until the last event
        assert record["talk_ms"] >= 1000 and record["answered_at"] is not None
    assert started <= _ids(tenant, "call.ended") and started <= _ids(tenant, "call.failed")

    again = sipp.call(tenant.number_for([{"verb": "say", "text": "Back."}, {"verb": "hangup"}]))
    assert again.ok, again.errors  # the new controller serves calls
