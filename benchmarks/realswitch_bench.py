"""The product on the real FreeSWITCH: how fast calls connect, how many per second it keeps
up with, what a call costs the controller. Figures, not pass/fail.

The same switch, the same run, side by side (the machine is noisy: never compare across runs):
- static: a dialplan extension that answers, plays 1 s of tone and hangs up — the switch
  alone (added to this bench's private copy of the dialplan, never to fs-conf/);
- product: a number whose app_json is ``pause 1`` + ``hangup`` — the full product path
  (socket app → controller → number lookup, limiter, events, call record).
For each rate: calls ok/failed, INVITE→200 p50/p95 (sipp ``rtd``), controller CPU per call.
Then memory per held call (N calls held 60 s) and whether the switch returned to 0 channels.

Run: .venv/bin/python benchmarks/realswitch_bench.py [--rates 25,50,75,100] [--seconds 8]
     [--held 1000] [--quick] [--controller-processes N]
``--controller-processes N``: ``sbc controller --processes N``; CPU and memory are then summed
over the supervising process and its controller children.
Needs ../shared/freeswitch (or SBC_FREESWITCH_DIR) and sipp, like tests/realswitch.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RUN = f"bench_rs_{os.getpid()}"
os.environ.setdefault("SBC_DATABASE_URL", f"postgresql://postgres@127.0.0.1:5432/sbc_{RUN}")
os.environ.setdefault("SBC_REDIS_KEY_PREFIX", f"sbc:{RUN}:")
os.environ.setdefault("SBC_AMQP_URL", f"amqp://guest:guest@127.0.0.1:5672/sbc_{RUN}")
os.environ.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)
os.environ.setdefault("SBC_ALLOW_LOOPBACK_WEBHOOKS", "1")

from app.gevent_setup import patch  # noqa: E402

patch()

from sqlalchemy import create_engine, pool  # noqa: E402

from app.db.urls import sqlalchemy_url  # noqa: E402

from tests.realswitch.freeswitch import RealSwitch, SwitchPorts, freeswitch_tree, missing_reason  # noqa: E402
from tests.realswitch.product import Product  # noqa: E402
from tests.realswitch.provision import create_tenant_with_trunk  # noqa: E402
from tests.realswitch.sipp import Sipp  # noqa: E402

STATIC_NUMBER = "19990000000"
STATIC_EXTENSION = f"""
    <extension name="bench_static">
      <condition field="destination_number" expression="^{STATIC_NUMBER}$">
        <action application="answer"/>
        <action application="playback" data="tone_stream://%(1000,0,440)"/>
        <action application="hangup"/>
      </condition>
    </extension>
"""
PRODUCT_VERBS = [{"verb": "pause", "length": 1}, {"verb": "hangup"}]
HELD_VERBS = [{"verb": "pause", "length": 60}, {"verb": "hangup"}]
HELD_RATE = 20  # calls/s while filling up the held calls (1,000 in 50 s, each held 60 s)


class BenchSwitch(RealSwitch):
    """The product's configuration plus one static extension, first in the public context."""

    def install_config(self) -> None:
        super().install_config()
        public = self.conf / "dialplan" / "public.xml"
        text = public.read_text()
        marker = '<context name="public">'
        public.write_text(text.replace(marker, marker + STATIC_EXTENSION, 1))


def _tree(pid: int) -> list[int]:
    """The process and its children (``--controller-processes``: the siblings)."""
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        pids += [int(c) for c in (task / "children").read_text().split()]
    return pids


def _cpu_seconds(pid: int) -> float:
    total = 0.0
    for one in _tree(pid):
        fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _rss_kb(pid: int) -> int:
    total = 0
    for one in _tree(pid):
        for line in Path(f"/proc/{one}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100)[q - 1]


def run_rate(sipp: Sipp, switch: RealSwitch, number: str, rate: int, seconds: float,
             pid: int | None) -> dict:
    calls = int(rate * seconds)
    cpu0 = _cpu_seconds(pid) if pid else 0.0
    result = sipp.call(number, calls=calls, rate=rate, trace_rtt=True, timeout=seconds + 120)
    cpu = (_cpu_seconds(pid) - cpu0) if pid else 0.0
    failed = len(result.statuses()) or (0 if result.ok else _failed_from(result.stdout))
    left = switch.wait_idle(30)
    rtt = result.rtt_ms
    return {"calls": calls, "ok": len(rtt), "failed": calls - len(rtt) if not failed else failed,
            "p50": _pct(rtt, 50), "p95": _pct(rtt, 95), "cpu_ms_per_call": cpu * 1000 / calls,
            "left": left}


def _failed_from(stdout: str) -> int:
    for line in stdout.splitlines():
        if line.strip().startswith("Failed call"):
            parts = line.split("|")
            try:
                return int(parts[-2].strip())
            except (ValueError, IndexError):
                return -1
    return -1


def held_memory(sipp: Sipp, switch: RealSwitch, number: str, held: int, pid: int) -> None:
    time.sleep(2)
    before = _rss_kb(pid)
    # placed at a rate the product sustains: the point is memory per held call, not overload
    run = sipp.start_calls(number, calls=held, rate=HELD_RATE, limit=held)
    deadline = time.monotonic() + held / HELD_RATE + 30
    up = 0
    while time.monotonic() < deadline:
        up = switch.channel_count()
        if up >= held:
            break
        time.sleep(1)
    time.sleep(3)
    peak = _rss_kb(pid)
    result = run.wait(timeout=180)
    left = switch.wait_idle(60)
    print(f"memory: {up} calls held — controller RSS {before / 1024:.1f} MB -> {peak / 1024:.1f} MB, "
          f"{(peak - before) / max(up, 1):.1f} KB per held call; sipp ok={result.ok}; "
          f"channels left after: {left}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rates", default="25,50,75,100")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--held", type=int, default=1000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--controller-processes", type=int, default=1,
                        help="sbc controller --processes N (sibling controllers on one port)")
    parser.add_argument("--product-only", action="store_true",
                        help="skip the static path (to profile the controller under load)")
    args = parser.parse_args()
    if args.quick:
        args.rates, args.seconds, args.held = "25,50", 4.0, 100
    reason = missing_reason(freeswitch_tree())
    if reason:
        print(f"skipped: {reason}")
        return
    from tests.plugins.services import amqp_vhost_name, create_vhost, delete_vhost
    from app.db.migrate import ensure_database, upgrade

    ensure_database()
    upgrade()
    vhost = amqp_vhost_name()
    create_vhost(vhost)
    work = Path(tempfile.mkdtemp(prefix="sbc-bench-rs-"))
    switch = BenchSwitch(freeswitch_tree(), work / "fs", SwitchPorts.pick(), "bench-esl")
    switch.start()
    os.environ["SBC_CONTROLLER_PROCESSES"] = str(args.controller_processes)
    product = Product(switch, work)
    engine = create_engine(sqlalchemy_url(os.environ["SBC_DATABASE_URL"]), poolclass=pool.NullPool)
    try:
        product.start()
        tenant = create_tenant_with_trunk(product, engine)
        number = tenant.number_for(PRODUCT_VERBS)
        held_number = tenant.number_for(HELD_VERBS)
        sipp = Sipp(switch, work / "sipp")
        sipp.call(number, calls=5, rate=5)  # warm up both paths
        sipp.call(STATIC_NUMBER, calls=5, rate=5)
        pid = product.controller.pid
        print(f"controller pid {pid}, {args.controller_processes} process(es)", flush=True)
        print("| calls/s | static ok/failed | static p50/p95 ms | product ok/failed | "
              "product p50/p95 ms | controller CPU ms/call | channels left |")
        print("|---|---|---|---|---|---|---|")
        for rate in [int(r) for r in args.rates.split(",") if r]:
            s = (run_rate(sipp, switch, STATIC_NUMBER, rate, args.seconds, None)
                 if not args.product_only else
                 {"ok": 0, "failed": 0, "p50": float("nan"), "p95": float("nan"), "left": 0})
            p = run_rate(sipp, switch, number, rate, args.seconds, pid)
            print(f"| {rate} | {s['ok']}/{s['failed']} | {s['p50']:.0f}/{s['p95']:.0f} | "
                  f"{p['ok']}/{p['failed']} | {p['p50']:.0f}/{p['p95']:.0f} | "
                  f"{p['cpu_ms_per_call']:.1f} | {s['left']}/{p['left']} |", flush=True)
        if args.held:
            held_memory(sipp, switch, held_number, args.held, pid)
    finally:
        product.stop()
        switch.stop()
        engine.dispose()
        delete_vhost(vhost)
        from tests.plugins.database import _maintenance  # noqa: PLC0415
        from app.db.engine import reset_engines
        reset_engines()
        _maintenance(f'DROP DATABASE IF EXISTS "sbc_{RUN}" WITH (FORCE)')


if __name__ == "__main__":
    main()
