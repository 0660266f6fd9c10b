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

Run: .venv/bin/python benchmarks/transfer_bench.py [--transfers 10]
Needs ../shared/freeswitch and sipp. The machine is shared and noisy (2 cores, several
engineers' suites): compare figures within one run only.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks import private_stack  # noqa: E402  (before app: it sets the environment)

RUN = private_stack.configure("transfer")

from app.gevent_setup import patch  # noqa: E402

patch()

from sqlalchemy import create_engine, pool  # noqa: E402

from app.db.urls import sqlalchemy_url  # noqa: E402
from benchmarks.live_control_bench import percentile  # noqa: E402
from tests.agent_channel.client import ChannelClient  # noqa: E402
from tests.realswitch import agents as sip_agents  # noqa: E402
from tests.realswitch.freeswitch import RealSwitch, SwitchPorts, freeswitch_tree, missing_reason  # noqa: E402
from tests.realswitch.product import Product  # noqa: E402
from tests.realswitch.provision import create_tenant_with_trunk, poll  # noqa: E402
from tests.realswitch.sipp import Sipp, _messages  # noqa: E402


def _ringing_stamps(messages: str) -> list[float]:
    """When the phone sent each 180 Ringing (epoch seconds)."""
    return sorted(stamp for stamp, direction, text in _messages(messages)
                  if direction == "sent" and text.startswith("SIP/2.0 180"))


def run(transfers: int, work: Path) -> None:
    switch = RealSwitch(freeswitch_tree(), work / "fs", SwitchPorts.pick(), "bench-esl")
    switch.start()
    product = Product(switch, work)
    engine = create_engine(sqlalchemy_url(os.environ["SBC_DATABASE_URL"]), poolclass=pool.NullPool)
    sipp = Sipp(switch, work / "sipp")
    try:
        product.start()
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
    finally:
        product.stop()
        switch.stop()
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transfers", type=int, default=10)
    args = parser.parse_args()
    reason = missing_reason(freeswitch_tree())
    if reason:
        print(f"skipped: {reason}")
        return
    with private_stack.private_stack(RUN) as work:
        run(args.transfers, work)


if __name__ == "__main__":
    main()
