"""The product on the real FreeSWITCH: how fast calls connect, how many per second it keeps
up with, what a call costs the controller. Figures, not pass/fail.

The same switch, the same run, side by side (the machine is noisy: never compare across runs):
- static: a dialplan extension that answers, plays 1 s of tone and hangs up — the switch
  alone (added to this bench's private copy of the dialplan, never to fs-conf/);
- product: a number whose app_json is ``pause 1`` + ``hangup`` — the full product path
  (socket app → controller → number lookup, limiter, events, call record).
For each rate: calls ok/failed, INVITE→200 p50/p95 (sipp ``rtd``), controller CPU per call
(counted until the switch is idle, the outbox empty and the controller quiet again);
then CPU per placed call by process (switch, controller, PostgreSQL, broker, Redis, sipp,
kernel workers), static vs product, to show where the product's extra cost lands.
Then N calls held 60 s, on a static extension and on the product: how many were up at once,
the switch's CPU and the whole machine's (busy share, context switches/s) while they were
held, the controller's memory per held call, and whether the switch returned to 0 channels.

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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks import private_stack  # noqa: E402  (before app: it sets the environment)

RUN = private_stack.configure("rs")
os.environ.setdefault("SBC_ALLOW_LOOPBACK_WEBHOOKS", "1")

from app.gevent_setup import patch  # noqa: E402

patch()

from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import Engine  # noqa: E402

from tests.realswitch.freeswitch import RealSwitch  # noqa: E402
from tests.realswitch.product import Product  # noqa: E402
from tests.realswitch.provision import create_tenant_with_trunk  # noqa: E402
from tests.realswitch.sipp import Sipp  # noqa: E402

STATIC_NUMBER = "19990000000"
STATIC_HELD_NUMBER = "19990000001"  # the held calls' counterpart: answer, 60 s of silence


def _static_extension(name: str, number: str, middle: str) -> str:
    """A dialplan extension that answers ``number``, runs ``middle`` and hangs up."""
    return f"""
    <extension name="{name}">
      <condition field="destination_number" expression="^{number}$">
        <action application="answer"/>
        {middle}
        <action application="hangup"/>
      </condition>
    </extension>"""


STATIC_EXTENSION = (
    _static_extension("bench_static", STATIC_NUMBER,
                      '<action application="playback" data="tone_stream://%(1000,0,440)"/>')
    + _static_extension("bench_static_held", STATIC_HELD_NUMBER,
                        '<action application="sleep" data="60000"/>'))

PRODUCT_VERBS = [{"verb": "pause", "length": 1}, {"verb": "hangup"}]
HELD_VERBS = [{"verb": "pause", "length": 60}, {"verb": "hangup"}]
HELD_RATE = 20  # calls/s while filling up the held calls (1,000 in 50 s, each held 60 s)
DRAIN_TIMEOUT_SECONDS = 60.0
DRAIN_POLL_SECONDS = 1.0
DRAIN_IDLE_SHARE = 0.03  # the controller below 3 % of a core: its burst work is done


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


# Where a call's CPU goes on this machine, by process name (the product's own processes are
# counted by pid: "controller"; PostgreSQL by the backends of this run's database plus the
# exited backends the server reaped, of any database: run on a quiet machine). The
# switch, sipp and the services run beside the product, so a call's full cost is their sum;
# "kernel" is the kernel's worker threads (disk flushes). Broker and kernel are shared with
# anything else running: read them on a quiet machine.
CPU_GROUPS = (("freeswitch", "freeswitch"), ("postgres", "postgres"), ("broker", "beam.smp"),
              ("redis", "redis-server"), ("sipp", "sipp"), ("kernel", "kworker"))


def _cpu_by_group(controller_pid: int | None) -> dict[str, float]:
    """CPU seconds so far per group of CPU_GROUPS, plus the controller's process tree."""
    tick = os.sysconf("SC_CLK_TCK")
    mine = set(_tree(controller_pid)) if controller_pid else set()
    totals = {name: 0.0 for name, _ in CPU_GROUPS} | {"controller": 0.0}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        seconds = (int(fields[11]) + int(fields[12])) / tick
        if int(entry.name) in mine:
            totals["controller"] += seconds
            continue
        if comm.startswith("postgres"):
            role = _postgres_role(entry)
            if role == "postmaster":
                # backends that exited meanwhile (a pool trimmed after a burst) are counted
                # in their parent's reaped-children time, or their CPU would vanish
                totals["postgres"] += (int(fields[13]) + int(fields[14])) / tick
                continue
            if role != "ours":
                continue  # another database's backend, or the server's own background work
        for name, prefix in CPU_GROUPS:
            if comm.startswith(prefix):
                totals[name] += seconds
                break
    return totals


def _postgres_role(proc: Path) -> str:
    """"ours": a backend connected to this run's database ("postgres: 15/main: user db ...");
    "postmaster": the server process itself; "other": anything else of PostgreSQL's."""
    try:
        cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "other"
    if not cmdline.startswith("postgres:"):
        return "postmaster"
    return "ours" if f" sbc_{RUN} " in cmdline else "other"


def _ms_per_call(before: dict[str, float], after: dict[str, float], calls: int) -> dict[str, float]:
    return {k: (after[k] - before[k]) * 1000 / calls for k in after}


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


def _unpublished_events(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM event_outbox WHERE published_at IS NULL")).scalar_one()


def wait_drained(engine, pid: int | None, timeout: float = DRAIN_TIMEOUT_SECONDS) -> float:
    """After a burst the product still writes held call records and relays their events: wait
    until the outbox is empty and the controller idles, so that work counts in this rate's CPU
    per call (at 75-100 calls/s it otherwise spilled into the next rate). Returns the seconds
    waited."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        busy0, t0 = _cpu_by_group(pid)["controller"], time.monotonic()
        time.sleep(DRAIN_POLL_SECONDS)
        busy = (_cpu_by_group(pid)["controller"] - busy0) / (time.monotonic() - t0)
        if busy < DRAIN_IDLE_SHARE and _unpublished_events(engine) == 0:
            break
    return time.monotonic() - started


def run_rate(sipp: Sipp, switch: RealSwitch, engine, number: str, rate: int, seconds: float,
             pid: int | None) -> dict:
    calls = int(rate * seconds)
    cpu0 = _cpu_by_group(pid)
    result = sipp.call(number, calls=calls, rate=rate, trace_rtt=True, timeout=seconds + 120)
    left = switch.wait_idle(30)  # the calls' last seconds and hang-ups count too
    wait_drained(engine, pid)
    cpu = _ms_per_call(cpu0, _cpu_by_group(pid), calls)
    failed = len(result.statuses()) or (0 if result.ok else _failed_from(result.stdout))
    rtt = result.rtt_ms
    return {"calls": calls, "ok": len(rtt), "failed": calls - len(rtt) if not failed else failed,
            "p50": _pct(rtt, 50), "p95": _pct(rtt, 95), "cpu_ms_per_call": cpu["controller"],
            "cpu": cpu, "left": left}


def _failed_from(stdout: str) -> int:
    for line in stdout.splitlines():
        if line.strip().startswith("Failed call"):
            parts = line.split("|")
            try:
                return int(parts[-2].strip())
            except (ValueError, IndexError):
                return -1
    return -1


def hold_calls(sipp: Sipp, switch: RealSwitch, number: str, held: int, pid: int) -> dict:
    """Place ``held`` calls that last 60 s; the most that were up at once, the controller's
    memory before and at that peak, the switch's CPU while they were held."""
    time.sleep(2)
    before = _rss_kb(pid)
    # placed at a rate the product sustains: the point is memory per held call, not overload
    run = sipp.start_calls(number, calls=held, rate=HELD_RATE, limit=held)
    deadline = time.monotonic() + held / HELD_RATE + 30
    up = peak_up = 0
    while time.monotonic() < deadline:
        up = switch.channel_count()
        peak_up = max(peak_up, up)
        if up >= held:
            break
        time.sleep(1)
    cpu0, machine0, t0 = _cpu_by_group(pid), _machine(), time.monotonic()
    time.sleep(3)
    cpu, machine = _cpu_by_group(pid), _machine()
    elapsed = time.monotonic() - t0
    peak = _rss_kb(pid)
    result = run.wait(timeout=180)
    left = switch.wait_idle(60)
    busy, idle = machine[0] - machine0[0], machine[1] - machine0[1]
    return {"up": max(peak_up, up), "rss_before": before, "rss_peak": peak, "ok": result.ok,
            "left": left, "switch_cpu": (cpu["freeswitch"] - cpu0["freeswitch"]) / elapsed,
            "machine_busy": busy / max(busy + idle, 1),
            "switches_per_s": (machine[2] - machine0[2]) / elapsed}


def _machine() -> tuple[int, int, int]:
    """Whole-machine CPU ticks busy and idle (idle + iowait), and context switches so far
    (/proc/stat): what the held calls cost beyond the processes this bench names."""
    busy = idle = switches = 0
    for line in Path("/proc/stat").read_text().splitlines():
        fields = line.split()
        if fields[0] == "cpu":
            ticks = [int(v) for v in fields[1:]]
            idle = ticks[3] + ticks[4]
            busy = sum(ticks[:8]) - idle
        elif fields[0] == "ctxt":
            switches = int(fields[1])
    return busy, idle, switches


def held_memory(sipp: Sipp, switch: RealSwitch, numbers: tuple[str, str], held: int, pid: int) -> None:
    """The same held calls on the static extension, then on the product (same run)."""
    static = hold_calls(sipp, switch, numbers[0], held, pid)
    product = hold_calls(sipp, switch, numbers[1], held, pid)
    print(f"\nheld calls ({held} placed at {HELD_RATE}/s, 60 s each), static / product:")
    print(f"- most up at once: {static['up']} / {product['up']}; the switch's CPU meanwhile "
          f"{static['switch_cpu'] * 100:.0f} % / {product['switch_cpu'] * 100:.0f} % of a core; "
          f"the whole machine {static['machine_busy'] * 100:.0f} % / "
          f"{product['machine_busy'] * 100:.0f} % busy, "
          f"{static['switches_per_s'] / 1000:.0f}k / {product['switches_per_s'] / 1000:.0f}k "
          f"context switches/s")
    print(f"- controller RSS {product['rss_before'] / 1024:.1f} MB -> {product['rss_peak'] / 1024:.1f} MB, "
          f"{(product['rss_peak'] - product['rss_before']) / max(product['up'], 1):.1f} KB per held call")
    print(f"- sipp ok: {static['ok']} / {product['ok']}; channels left after: "
          f"{static['left']} / {product['left']}", flush=True)


def _print_costs(costs: list[tuple[int, dict[str, float], dict[str, float]]]) -> None:
    """CPU ms per placed call by process, static vs product at each rate (same run)."""
    groups = ["freeswitch", "controller", "postgres", "broker", "redis", "sipp", "kernel"]
    print("\nCPU per placed call (ms), static / product:")
    print("| calls/s | " + " | ".join(groups) + " | total |")
    print("|---" * (len(groups) + 2) + "|")
    for rate, static, product in costs:
        cells = [f"{static.get(g, 0):.1f} / {product.get(g, 0):.1f}" for g in groups]
        totals = f"{sum(static.get(g, 0) for g in groups):.1f} / {sum(product.get(g, 0) for g in groups):.1f}"
        print(f"| {rate} | " + " | ".join(cells) + f" | {totals} |", flush=True)


def measure(args: argparse.Namespace, work: Path, switch: RealSwitch, product: Product, engine: Engine) -> None:
    """The product has started: all N controller processes are ready (their /readyz)."""
    print(f"controller: {args.controller_processes} process(es) ready in "
          f"{product.controller_ready_seconds:.1f} s", flush=True)
    tenant = create_tenant_with_trunk(product, engine)  # each process applies both writes
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
    costs = []
    for rate in [int(r) for r in args.rates.split(",") if r]:
        s = (run_rate(sipp, switch, engine, STATIC_NUMBER, rate, args.seconds, None)
             if not args.product_only else
             {"ok": 0, "failed": 0, "p50": float("nan"), "p95": float("nan"), "left": 0,
              "cpu": {}})
        p = run_rate(sipp, switch, engine, number, rate, args.seconds, pid)
        costs.append((rate, s["cpu"], p["cpu"]))
        print(f"| {rate} | {s['ok']}/{s['failed']} | {s['p50']:.0f}/{s['p95']:.0f} | "
              f"{p['ok']}/{p['failed']} | {p['p50']:.0f}/{p['p95']:.0f} | "
              f"{p['cpu_ms_per_call']:.1f} | {s['left']}/{p['left']} |", flush=True)
    _print_costs(costs)
    if args.held:
        held_memory(sipp, switch, (STATIC_HELD_NUMBER, held_number), args.held, pid)


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
    os.environ["SBC_CONTROLLER_PROCESSES"] = str(args.controller_processes)
    private_stack.on_real_switch(RUN, lambda *stack: measure(args, *stack), switch_class=BenchSwitch)


if __name__ == "__main__":
    main()
