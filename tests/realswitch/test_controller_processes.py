"""``sbc controller --processes 2`` on the real switch: both siblings serve calls on the one
socket port; their orphan sweepers (calls held past the grace) and the recovery of a SIGKILLed
sibling's restart leave the other sibling's calls alone, and the killed sibling's calls are
recorded as lost (connection_lost)."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from app.settings import get_settings
from tests.realswitch.product import ProductProcess, wait_for_port
from tests.realswitch.provision import poll

CALLS = 12
HOLD_SECONDS = 18  # past the orphan grace (10 s) and several sweeps (every 5 s)


def _child_pid(parent: int, index: int) -> int | None:
    for task in Path(f"/proc/{parent}/task").iterdir():
        for pid in (task / "children").read_text().split():
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"--process-index" in argv and argv[argv.index(b"--process-index") + 1] == str(index).encode():
                return int(pid)
    return None


def _sessions(redis_client, port: int, index: int) -> set[str]:
    key = f"{get_settings().redis_key_prefix}controller:sessions:127.0.0.1:{port}:{index}"
    return {m.decode() for m in redis_client.smembers(key)}


def test_two_controller_processes_share_the_port_and_a_killed_siblings_restart_takes_only_its_own_calls(
        product, tenant, sipp, real_switch, redis_client, realswitch_workdir):
    port = real_switch.ports.controller
    product.controller.stop()
    siblings = ProductProcess("controller-processes", ["controller", "--processes", "2"],
                              product.env, realswitch_workdir)
    try:
        siblings.start()
        assert wait_for_port(port), siblings.log_tail()
        assert poll(lambda: siblings.log_text().count("inbound ESL connected to") >= 2, 60), \
            siblings.log_tail()
        number = tenant.number_for([{"verb": "pause", "length": HOLD_SECONDS}, {"verb": "hangup"}])
        callers = sipp.start_calls(number, calls=CALLS, rate=10)
        spread = poll(lambda: (a := _sessions(redis_client, port, 0)) and
                      (b := _sessions(redis_client, port, 1)) and len(a | b) >= CALLS and (a, b), 20)
        assert spread, "both siblings took calls"
        first, second = spread
        time.sleep(12)  # scenario: held past the orphan grace: both sweepers have looked at every call
        assert real_switch.channel_count() == CALLS, "no sibling swept the other's calls"

        victim = _child_pid(siblings.pid, 1)
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        poll(lambda: (pid := _child_pid(siblings.pid, 1)) and pid != victim and pid, 20)
        callers.wait(HOLD_SECONDS + 30)
        records = tenant.wait_record(number, count=CALLS, timeout=40)
        by_call = {str(r["call_id"]): r for r in records}
        assert set(by_call) == first | second
        for call_id in first:  # the surviving sibling's calls ran to their end
            assert by_call[call_id]["hangup_reason"] != "connection_lost", by_call[call_id]
            assert by_call[call_id]["talk_ms"] >= (HOLD_SECONDS - 1) * 1000
        for call_id in second:  # the killed sibling's, recorded by its restart
            assert by_call[call_id]["hangup_reason"] == "connection_lost"
        print(f"\nreal switch, 2 controller processes: {len(first)} + {len(second)} calls; "
              f"sibling 1 killed, its {len(second)} calls recovered, sibling 0's kept")
        again = sipp.call(tenant.number_for([{"verb": "say", "text": "Back."}, {"verb": "hangup"}]),
                          calls=4, rate=4)
        assert again.ok, again.errors
    finally:
        siblings.stop()
        product.start_controller(wait=True)
