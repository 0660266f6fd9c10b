"""The agent SDK in a browser: time from the offer to `connected` on the agent's page, over N
calls (default 20). Figures, not pass/fail.

Debian's chromium (fake microphone) runs the example softphone (sdk/agent-js/examples) against
the real product and FreeSWITCH, registered over WSS; a sipp caller is queued, the page gets the
channel's `offer`, clicks Accept (the SDK sends `accept` and answers its WebRTC leg: ICE,
DTLS-SRTP), and the channel's `call` `connected` arrives once the switch bridged the legs
(`agent.accept` relayed from the bus). Both instants are the page's own clock
(performance.now()), so the figure is what an agent sees: accept round trip + SIP answer +
DTLS handshake + bridge + event relay (outbox → RabbitMQ → API → socket). The "click" is
instant here; a person adds their reaction time. Calls are sequential.

Run: .venv/bin/python benchmarks/agent_sdk_bench.py [--calls 20]
Needs ../shared/freeswitch, sipp, node, chromium and sdk/agent-js/node_modules (bash scripts/test
installs them). The machine is shared and noisy: compare figures within one run only.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks import private_stack  # noqa: E402  (before app: it sets the environment)

RUN = private_stack.configure("sdk")

from app.gevent_setup import patch  # noqa: E402

patch()

from sqlalchemy.engine import Engine  # noqa: E402

from tests.realswitch.freeswitch import RealSwitch  # noqa: E402
from tests.realswitch.product import Product  # noqa: E402
from tests.realswitch.provision import create_tenant_with_trunk, poll  # noqa: E402
from tests.realswitch.sipp import Sipp  # noqa: E402
from tests.sdk.browser import BrowserAgent, ExampleServer  # noqa: E402
from tests.sdk.browser import missing_reason as browser_missing  # noqa: E402

PASSWORD = "bench-agent-pass-1"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def run(calls: int, work: Path, switch: RealSwitch, product: Product, engine: Engine) -> None:
    server = browser = None
    try:
        tenant = create_tenant_with_trunk(product, engine)
        queue = tenant.admin.post("/api/queues", {"name": "bench", "offer_timeout_seconds": 20,
                                                  "wrap_up_seconds": 0, "announce_position": False})
        user = tenant.admin.post("/api/users", {"username": "web", "password": PASSWORD, "role": "agent"})
        agent = tenant.admin.post("/api/agents", {"user_id": user["id"], "queue_ids": [queue["id"]]})
        sip = tenant.admin.post(f"/api/agents/{agent['id']}/sip-credentials", None)
        poll(lambda: switch.api(f"user_exists id {sip['sip_username']} {sip['sip_domain']}",
                                check=False).strip() == "true", 15)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        (work / "sdk").mkdir(exist_ok=True)
        server = ExampleServer(product.api_port, work / "sdk")
        browser = BrowserAgent(server.url(tenant.subdomain), "web", PASSWORD, sip=sip,
                               wss_url=f"wss://127.0.0.1:{switch.ports.agent_wss}", logdir=work / "sdk")
        browser.expect("ready", timeout=60)
        sipp = Sipp(switch, work / "sipp")
        times: list[float] = []
        for n in range(calls):
            caller = sipp.start_calls(number, codec="PCMA", scenario="uac-wait-bye.xml")
            connected = browser.command("take", "connected")
            browser.command("hangup", "ended")
            result = caller.wait(60)
            times.append(float(connected["offerToConnectedMs"]))
            print(f"call {n + 1}: offer→connected {connected['offerToConnectedMs']} ms"
                  f"{'' if result.ok else ' (caller: ' + result.errors[-200:] + ')'}", flush=True)
            switch.wait_idle(timeout=20)
        print(f"\noffer → connected in the browser over {len(times)} calls: p50 {statistics.median(times):.0f} ms, "
              f"p90 {percentile(times, 90):.0f} ms, min {min(times):.0f} ms, max {max(times):.0f} ms")
    finally:
        if browser is not None:
            browser.close()
        if server is not None:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    private_stack.on_real_switch(RUN, lambda *stack: run(args.calls, *stack), also_missing=browser_missing)


if __name__ == "__main__":
    main()
