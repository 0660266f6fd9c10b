"""Rounds of an attended transfer on the simulator, timed: run by benchmarks/transfer_bench.py
``--simulator`` (this file is not collected by the suite: its name is not ``test_*``).

Each round (a fresh account: ana answers a queued caller, ben is idle): ana's ``consult`` of ben
→ ben's phone ringing (the simulator's consult leg rings once the controller's ``originate``
arrived) and → the ack (the controller has done the consultation on the switch); ben answers;
ana's ``conference`` → the ack and → the caller in the three-way room with both agents' legs
(the caller's session joined the room the controller moved the legs into). The ``_ask`` goes
through the live-call channel (Redis) to the in-process controller, as the agent channel's
commands do. Figures, not pass/fail."""
from __future__ import annotations

import json
import os
import time

import gevent

from tests.plugins.eventually import eventually
from tests.session.test_agent_consult import _answered_by_ana, _ask

ROUNDS = int(os.environ.get("SBC_BENCH_ROUNDS", "10"))
OUT = os.environ.get("SBC_BENCH_OUT", "")


def _round(controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client) -> dict:
    account, agents, _presence, call, _ana_phone, ben_phone = _answered_by_ana(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    figures: dict[str, float] = {}
    started = time.perf_counter()

    def rung() -> None:
        ben_phone.ringing.wait(10)
        figures["consult_to_ringing_ms"] = (time.perf_counter() - started) * 1000

    waiter = gevent.spawn(rung)
    _ask(redis_client, account, call.uuid, agents["ana"], "consult",
         {"target": {"type": "agent", "agentId": agents["ben"]}})
    figures["consult_to_ack_ms"] = (time.perf_counter() - started) * 1000
    waiter.join(10)
    ben_phone.answer()
    eventually(lambda: ben_phone.b_leg_uuid in call.legs and call.legs[ben_phone.b_leg_uuid].answered,
               timeout=10, interval=0.005, what="ben answered")
    ana_leg = services.live_sessions[call.uuid].ctx.consult.agent_leg
    started = time.perf_counter()
    _ask(redis_client, account, call.uuid, agents["ana"], "conference")
    figures["conference_to_ack_ms"] = (time.perf_counter() - started) * 1000
    eventually(lambda: "3way" in call.rejoined and any(
        members == {ana_leg, ben_phone.b_leg_uuid} for members in call.three_way.values()),
        timeout=10, interval=0.002, what="the caller in the three-way room")
    figures["conference_to_joined_ms"] = (time.perf_counter() - started) * 1000
    _ask(redis_client, account, call.uuid, agents["ana"], "conference_end")
    assert call.wait(15), "the call did not end"
    return figures


def test_consult_and_three_way_rounds(controller, simulate_call, number_with_app, owner_engine, owner_conn,
                                      services, redis_client, live_control):
    rounds = [_round(controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
              for _ in range(ROUNDS)]
    if OUT:
        with open(OUT, "w") as out:
            json.dump(rounds, out)
    print(json.dumps(rounds))
