"""An agent's attended transfer on the real switch: time from the agent channel's ``consult``
command to the consulted party's phone ringing, over N consultations per target kind (default
10): another agent (its sipp phone) and a phone number (least-cost routing to a sipp carrier).
Figures, not pass/fail.

One queue whose only member is agent A; agent B is consulted (not a member: a consulted agent
is claimed as a queue's agent is, docs/agents.md "Attended transfers"). Each round a sipp
caller is answered by A, A sends ``consult`` on its channel, the target's sipp rings (its
``180``) and answers, A completes (``completeTransfer``) and the call is hung up through ``POST
/api/calls/:callId/actions``. "Ringing" is the moment the target sent its 180 (sipp's message
trace, same machine clock); the command's moment is when the bench sent the frame. Also
printed: the command → ack time (the ack comes once the controller has parked the agent's leg
and the switch accepted the ``bgapi originate``).

The blind transfer's figure (``transfer`` → the target agent ringing) is
benchmarks/transfer_bench.py's.

Run: .venv/bin/python benchmarks/consult_bench.py [--consults 10]
Needs ../shared/freeswitch and sipp. The machine is shared and noisy (2 cores, several
engineers' suites): compare figures within one run only.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks import private_stack  # noqa: E402  (before app: it sets the environment)

RUN = private_stack.configure("consult")

from app.gevent_setup import patch  # noqa: E402

patch()

from sqlalchemy.engine import Engine  # noqa: E402

from benchmarks.live_control_bench import percentile  # noqa: E402
from tests.agent_channel.client import ChannelClient  # noqa: E402
from tests.realswitch import agents as sip_agents  # noqa: E402
from tests.realswitch import outbound  # noqa: E402
from tests.realswitch.freeswitch import RealSwitch  # noqa: E402
from tests.realswitch.product import Product  # noqa: E402
from tests.realswitch.provision import create_tenant_with_trunk, poll  # noqa: E402
from tests.realswitch.sipp import Sipp, _messages  # noqa: E402

ROUND_SECONDS = 12  # the agents' phones stay registered 30 s + this per round


def _ringing_stamps(messages: str) -> list[float]:
    """When the phone (or carrier) sent each 180 Ringing (epoch seconds)."""
    return sorted(stamp for stamp, direction, text in _messages(messages)
                  if direction == "sent" and text.startswith("SIP/2.0 180"))


def _to_ring(sent_at: list[float], rings: list[float]) -> list[float]:
    """Each command's time to the first 180 after it (ms)."""
    return [(min(r for r in rings if r >= sent) - sent) * 1000 for sent in sent_at]


def _line(name: str, times: list[float]) -> str:
    return (f"{name}, {len(times)} consultations: p50 {statistics.median(times):.0f} ms, "
            f"p95 {percentile(times, 95):.0f} ms, min {min(times):.0f} ms, max {max(times):.0f} ms")


def run(consults: int, work: Path, switch: RealSwitch, product: Product, engine: Engine) -> None:
    sipp = Sipp(switch, work / "sipp")
    tenant = create_tenant_with_trunk(product, engine)
    carrier = sipp.carrier(scenario="uas-answer.xml", extra=("-trace_msg",))
    carrier_id, gateway_id = outbound.carrier(tenant, "consulted", carrier.port)
    prefix = outbound.prefix()
    outbound.route(product, tenant, prefix, [carrier_id])
    outbound.wait_gateways(switch, gateway_id)
    queue = tenant.admin.post("/api/queues", {"name": "bench", "offer_timeout_seconds": 15,
                                              "wrap_up_seconds": 1, "announce_position": False})
    first = sip_agents.new_agent(tenant, [queue["id"]], prefix="cx")
    consulted = sip_agents.new_agent(tenant, [], prefix="cx")
    for agent in (first, consulted):
        assert poll(lambda a=agent: sip_agents.in_directory(switch, a), 15), "directory not applied"
    seconds = 30 + 2 * consults * ROUND_SECONDS
    phones = [sip_agents.register(sipp, switch, agent, "agent-answer-ooc.xml", seconds=seconds)
              for agent in (first, consulted)]
    client = ChannelClient(product.api_port, f"{tenant.subdomain}.localhost")
    client.auth(sip_agents.login_token(product, tenant, first))
    number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
    targets = {"agent": {"type": "agent", "agentId": consulted.id},
               "number": {"type": "number", "number": f"+{prefix}5550123"}}
    sent_at: dict[str, list[float]] = {kind: [] for kind in targets}
    acked_ms: list[float] = []
    sip_agents.make_available(tenant, first)
    sip_agents.make_available(tenant, consulted)
    for round_ in range(2 * consults):
        kind = "agent" if round_ % 2 == 0 else "number"
        for agent in (first, consulted):  # back from the last round's wrap-up (1 s)
            assert poll(lambda a=agent: tenant.admin.get(f"/api/agents/{a.id}")["state"] == "available", 15)
        caller = sipp.start_calls(number, scenario="uac-wait-bye.xml")
        offer = client.expect("offer", timeout=20)
        client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
        sent_at[kind].append(time.time())
        started = time.perf_counter()
        ack = client.command("consult", target=targets[kind])
        acked_ms.append((time.perf_counter() - started) * 1000)
        assert ack["ok"] is True, ack
        # refused consult_not_answered until the target answered
        assert poll(lambda: client.command("completeTransfer")["ok"], 20), f"round {round_}: never completed"
        client.expect("call", lambda m: m["phase"] == "transferred", timeout=20)
        tenant.admin.post(f"/api/calls/{offer['offerId']}/actions", {"action": "hangup"}, expect=200)
        assert caller.wait(30).ok
    client.close()
    results = [phone.stop() for phone in phones]
    rings = {"agent": _ringing_stamps(results[1].messages), "number": _ringing_stamps(carrier.stop().messages)}
    print(_line("consult command → the consulted agent's phone ringing (its 180)",
                _to_ring(sent_at["agent"], rings["agent"])))
    print(_line("consult command → the number's carrier ringing (its 180, through LCR)",
                _to_ring(sent_at["number"], rings["number"])))
    print(f"consult command → ack (agent parked, originate accepted), {len(acked_ms)} consultations: "
          f"p50 {statistics.median(acked_ms):.0f} ms, p95 {percentile(acked_ms, 95):.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--consults", type=int, default=10, help="consultations per target kind")
    args = parser.parse_args()
    private_stack.on_real_switch(RUN, lambda *stack: run(args.consults, *stack))


if __name__ == "__main__":
    main()
