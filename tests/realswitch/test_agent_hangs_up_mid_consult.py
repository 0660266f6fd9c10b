"""The consulting agent hangs up in the middle of an attended transfer, on the real switch: while
it talks with the consulted party, while it has swapped back to its caller, and after swapping
back again. Nobody is left on the line: the caller is hung up (as when an agent hangs up on a
plain call), the consulted party too, within CALL_END_SECONDS, and the record is written."""
from __future__ import annotations

import time

import pytest

from tests.plugins.eventually import eventually
from tests.realswitch.test_agent_consult_realswitch import (
    _bridged_to,
    _in_room,
    channel_queue,  # noqa: F401  (the fixture: a queue with two SIP agents)
    consulting_until_bye,
)

PHONE_SECONDS = 16  # the phones stay registered this long (the agent hangs up ~6 s in)
CALL_END_SECONDS = 5


@pytest.mark.parametrize("swaps", [0, 1, 2])
def test_given_a_consultation_when_the_consulting_agent_hangs_up_then_the_caller_and_the_target_are_hung_up(
        product, tenant, channel_queue, sipp, real_switch, swaps):  # noqa: F811
    with consulting_until_bye(product, tenant, channel_queue, sipp, real_switch, PHONE_SECONDS) as (call, target):
        eventually(lambda: _bridged_to(real_switch, call.leg, target), timeout=10, what="the agent with the target")
        for swap in range(swaps):
            eventually(lambda: call.client.command("swap")["ok"], timeout=10, what=f"swap {swap + 1}")
            if swap % 2 == 0:
                eventually(lambda: _in_room(real_switch, call.call_id, call.leg), timeout=10,
                           what="the caller and the agent in their room")
            else:
                eventually(lambda: _bridged_to(real_switch, call.leg, target), timeout=10,
                           what="the agent with the target again")
        hung_up = time.monotonic()
        real_switch.api(f"uuid_kill {call.leg} NORMAL_CLEARING")  # the agent's phone hangs up
        eventually(lambda: real_switch.channel_count() == 0, timeout=CALL_END_SECONDS,
                   what="no one left on the line")
        print(f"{swaps} swap(s): every leg gone {time.monotonic() - hung_up:.2f} s after the agent hung up")
        result = call.caller.wait(30)
    assert result.ok, result.errors or result.stdout[-1500:]
    record = tenant.wait_record(call.number)[0]
    assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == call.first.id
