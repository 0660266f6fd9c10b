"""An agent's blind transfer on the real switch: time from the agent channel's ``transfer``
command to the target agent's phone ringing, over N transfers (default 10). Figures, not
pass/fail.

One queue whose only member is agent A; agent B is the transfer target (not a member: it is
offered through the caller's queue, docs/agents.md "Transfers"). Each round a sipp caller is
answered by A, A sends ``transfer`` to B on its channel, B's sipp phone rings (its ``180``) and
answers, and the call is hung up through ``POST /api/calls/:callId/actions``. "Ringing" is the
moment B's phone sent its 180 (sipp's message trace, same machine clock); the command's moment
is when the test sent the frame. Also printed: the command → ack time (the ack comes once the
controller has done the transfer on the switch).

With ``--simulator``: an attended transfer's consult set-up and three-way join on the ESL
simulator, over N rounds (default 20; tests/session/bench_consult_rounds.py, run through pytest
for the suite's fixtures: real PostgreSQL, Redis and the in-process controller, the commands
going through the live-call channel as the agent channel's do). Printed: ``consult`` → the
consulted agent's phone ringing, ``consult`` → ack, ``conference`` → ack, ``conference`` → the
caller in the three-way room with both agents' legs. The simulator's own polling (10 ms in its
room model) is part of the last figure: an upper bound, not the switch's time.

Run: .venv/bin/python benchmarks/transfer_bench.py [--transfers 10]
     .venv/bin/python benchmarks/transfer_bench.py --simulator [--rounds 20]
The real-switch run needs ../shared/freeswitch and sipp. The machine is shared and noisy (2 cores, several
engineers' suites): compare figures within one run only.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ORIGINAL_ENV = dict(os.environ)  # the simulator rounds' pytest child gets the suite's own set-up
from benchmarks import private_stack  # noqa: E402  (before app: it sets the environment)

RUN = private_stack.configure("transfer")

from app.gevent_setup import patch  # noqa: E402

patch()

from sqlalchemy.engine import Engine  # noqa: E402

from benchmarks.live_control_bench import percentile  # noqa: E402
from tests.agent_channel.client import ChannelClient  # noqa: E402
from tests.realswitch import agents as sip_agents  # noqa: E402
from tests.realswitch.freeswitch import RealSwitch  # noqa: E402
from tests.realswitch.product import Product  # noqa: E402
from tests.realswitch.provision import create_tenant_with_trunk, poll  # noqa: E402
from tests.realswitch.sipp import Sipp, _messages  # noqa: E402


def _ringing_stamps(messages: str) -> list[float]:
    """When the phone sent each 180 Ringing (epoch seconds)."""
    return sorted(stamp for stamp, direction, text in _messages(messages)
                  if direction == "sent" and text.startswith("SIP/2.0 180"))


def run(transfers: int, work: Path, switch: RealSwitch, product: Product, engine: Engine) -> None:
    sipp = Sipp(switch, work / "sipp")
    tenant = create_tenant_with_trunk(product, engine)
    queue = tenant.admin.post("/api/queues", {"name": "bench", "offer_timeout_seconds": 15,
                                              "wrap_up_seconds": 1, "announce_position": False})
    first = sip_agents.new_agent(tenant, [queue["id"]], prefix="bx")
    target = sip_agents.new_agent(tenant, [], prefix="bx")
    for agent in (first, target):
        assert poll(lambda a=agent: sip_agents.in_directory(switch, a), 15), "directory not applied"
    seconds = 30 + transfers * 12
    phones = [sip_agents.register(sipp, switch, agent, "agent-answer-ooc.xml", seconds=seconds)
              for agent in (first, target)]
    client = ChannelClient(product.api_port, f"{tenant.subdomain}.localhost")
    client.auth(sip_agents.login_token(product, tenant, first))
    number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
    sent_at: list[float] = []
    acked_ms: list[float] = []
    sip_agents.make_available(tenant, first)
    sip_agents.make_available(tenant, target)
    for _ in range(transfers):
        for agent in (first, target):  # back from the last round's wrap-up (1 s)
            assert poll(lambda a=agent: tenant.admin.get(f"/api/agents/{a.id}")["state"] == "available", 15)
        caller = sipp.start_calls(number, scenario="uac-wait-bye.xml")
        offer = client.expect("offer", timeout=20)
        client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
        sent_at.append(time.time())
        started = time.perf_counter()
        ack = client.command("transfer", target={"type": "agent", "agentId": target.id})
        acked_ms.append((time.perf_counter() - started) * 1000)
        assert ack["ok"] is True, ack
        if not poll(lambda o=offer: [e for e in tenant.events("agent.accept")
                                     if e["payload"]["callId"] == o["offerId"]
                                     and e["payload"]["agentId"] == target.id], 20):
            seen = [(e["key"], e["payload"].get("agentId")) for e in tenant.events("")
                    if e["payload"].get("callId") == offer["offerId"]]
            raise AssertionError(f"round {len(sent_at)}: the target never answered; the call's events: {seen}"
                                 f"\n{product.controller.log_text()[-3000:]}")
        tenant.admin.post(f"/api/calls/{offer['offerId']}/actions", {"action": "hangup"}, expect=200)
        assert caller.wait(30).ok
    client.close()
    results = [phone.stop() for phone in phones]
    rings = _ringing_stamps(results[1].messages)
    to_ring = [(min(r for r in rings if r >= sent) - sent) * 1000 for sent in sent_at]
    print(f"transfer command → target agent's phone ringing (its 180), {len(to_ring)} transfers: "
          f"p50 {statistics.median(to_ring):.0f} ms, p95 {percentile(to_ring, 95):.0f} ms, "
          f"min {min(to_ring):.0f} ms, max {max(to_ring):.0f} ms")
    print(f"transfer command → ack (done on the switch): p50 {statistics.median(acked_ms):.0f} ms, "
          f"p95 {percentile(acked_ms, 95):.0f} ms")


SIM_FIGURES = (("consult_to_ringing_ms", "consult → consulted agent's phone ringing"),
               ("consult_to_ack_ms", "consult → ack (consultation done on the switch)"),
               ("conference_to_ack_ms", "conference → ack"),
               ("conference_to_joined_ms", "conference → caller in the three-way room with both agents"))


def run_simulator(rounds: int) -> None:
    """The rounds run in a pytest child (the suite's fixtures and private database); this
    process only reads their figures."""
    with tempfile.TemporaryDirectory(prefix="transfer-bench-") as tmp:
        out = Path(tmp) / "rounds.json"
        env = {**ORIGINAL_ENV, "SBC_BENCH_ROUNDS": str(rounds), "SBC_BENCH_OUT": str(out)}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/session/bench_consult_rounds.py"], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            print(done.stdout[-3000:], done.stderr[-3000:])
            raise SystemExit("the simulator rounds failed")
        figures = json.loads(out.read_text())
    print(f"attended transfer on the simulator, {len(figures)} rounds:")
    for key, label in SIM_FIGURES:
        values = [f[key] for f in figures]
        print(f"  {label}: p50 {statistics.median(values):.1f} ms, p95 {percentile(values, 95):.1f} ms, "
              f"max {max(values):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transfers", type=int, default=10)
    parser.add_argument("--simulator", action="store_true", help="consult and three-way figures on the simulator")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    if args.simulator:
        run_simulator(args.rounds)
        return
    private_stack.on_real_switch(RUN, lambda *stack: run(args.transfers, *stack))


if __name__ == "__main__":
    main()
