"""Live call control on the real switch: time from ``POST /api/calls/:callId/actions`` to the
switch having acted, over N requests per action (default 20). Figures, not pass/fail.

The API answers 200 only after the controller driving the call ran the FreeSWITCH command and
the switch answered ``+OK`` (uuid_send_dtmf, uuid_audio), so the request's round trip as the
client sees it (HTTP → sbc api → Redis pub/sub → controller → ESL → switch → back) is an upper
bound of "request → switch acting". One sipp caller in a long ``pause``; requests sequential.

Run: .venv/bin/python benchmarks/live_control_bench.py [--requests 20]
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

RUN = private_stack.configure("live")

from app.gevent_setup import patch  # noqa: E402

patch()

from sqlalchemy.engine import Engine  # noqa: E402

from tests.realswitch.freeswitch import RealSwitch  # noqa: E402
from tests.realswitch.product import Product  # noqa: E402
from tests.realswitch.provision import create_tenant_with_trunk, poll  # noqa: E402
from tests.realswitch.sipp import Sipp  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def run(requests: int, work: Path, switch: RealSwitch, product: Product, engine: Engine) -> None:
    tenant = create_tenant_with_trunk(product, engine)
    number = tenant.number_for([{"verb": "pause", "length": 120}])
    caller = Sipp(switch, work / "sipp").start_calls(number, scenario="uac-wait-bye.xml")
    answered = poll(lambda: [e["payload"]["callId"] for e in tenant.events("call.answered")], 20)
    assert answered, "the call was never answered"
    path = f"/api/calls/{answered[0]}/actions"
    figures: dict[str, list[float]] = {"dtmf": [], "mute/unmute": []}
    for n in range(requests):
        started = time.perf_counter()
        tenant.admin.post(path, {"action": "dtmf", "digits": "1"}, expect=200)
        figures["dtmf"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        tenant.admin.post(path, {"action": "mute" if n % 2 == 0 else "unmute"}, expect=200)
        figures["mute/unmute"].append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    tenant.admin.post(path, {"action": "hangup", "reason": "bench"}, expect=200)
    hangup_ms = (time.perf_counter() - started) * 1000
    caller.wait(30)
    for name, times in figures.items():
        print(f"{name}: request → switch +OK → 200 over {len(times)} requests: "
              f"p50 {statistics.median(times):.1f} ms, p95 {percentile(times, 95):.1f} ms, "
              f"min {min(times):.1f} ms, max {max(times):.1f} ms")
    print(f"hangup: {hangup_ms:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    private_stack.on_real_switch(RUN, lambda *stack: run(args.requests, *stack))


if __name__ == "__main__":
    main()
