"""Cost of the Prometheus instrumentation, and /readyz latency. Figures, not pass/fail.

1. Call setup with and without metrics, same run: two controller children (OutboundServer +
   the production CallSession, real PostgreSQL/Redis), identical except that in one every
   metric object the call path touches is replaced by a no-op; the simulator places calls on
   both, interleaved, at 10 calls/s each, so both see the same machine load. Figure: TCP
   connect -> first ``sendmsg execute`` (as call_bench.py), p50/p99, and the difference.
2. The raw cost of one instrumentation operation (counter inc, labelled inc, histogram
   observe), in nanoseconds, and the per-call total of the call path's operations.
3. /readyz latency (PostgreSQL + Redis + RabbitMQ checks, each a fresh connection) over HTTP on
   the ops listener, p50/p95 of 50 requests, and /metrics render time.

Run: .venv/bin/python benchmarks/metrics_bench.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import call_bench  # noqa: E402  (sets the bench database/Redis prefix, patches gevent)
import gevent  # noqa: E402

# calls/s over both children: low enough that the shared machine's PostgreSQL connection slots
# (two controllers' pools) and 2 cores keep up, so the figure is overhead, not queueing
RATE = 20


class _Off:
    """A metric that does nothing (the 'without metrics' controller only)."""

    def labels(self, *args, **kwargs) -> "_Off":
        return self

    def inc(self, *args) -> None:
        """Counted nowhere: this controller measures the call path without metrics."""

    def dec(self, *args) -> None:
        """As inc."""

    def observe(self, *args) -> None:
        """As inc."""


def _metrics_off() -> None:
    import app.calls.limiter
    import app.calls.records
    import app.voice.session
    import app.webhooks.client

    off = _Off()
    app.voice.session.CALLS_IN_PROGRESS = off
    app.voice.session.observe_call_setup = lambda *_: None
    app.calls.records.CALLS_FINISHED = off
    app.calls.limiter.LIMITER_REFUSALS = off
    app.webhooks.client.WEBHOOK_ATTEMPT_SECONDS = off
    app.webhooks.client.WEBHOOK_OUTCOMES = off


def serve(port: int, metrics: bool) -> None:
    if not metrics:
        _metrics_off()
    call_bench.serve(port)


def _start(port: int, metrics: bool) -> subprocess.Popen:
    args = [sys.executable, __file__, "--serve", str(port)] + ([] if metrics else ["--no-metrics"])
    child = subprocess.Popen(args, stdout=subprocess.PIPE, env=os.environ.copy(), text=True)
    assert child.stdout.readline().strip() == "ready"
    return child


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


def measure_setup(number: str, with_metrics, without_metrics, calls: int) -> None:
    from tests.simulator import Call, Timing, place_call

    timing = Timing(speak=0.02)
    placed = {"with": [], "without": []}
    interval = 1.0 / RATE  # in total, alternating between the two children
    start = time.monotonic()
    for i in range(calls * 2):
        delay = start + i * interval - time.monotonic()
        if delay > 0:
            gevent.sleep(delay)
        kind, address = ("with", with_metrics) if i % 2 == 0 else ("without", without_metrics)
        t0 = time.monotonic()
        placed[kind].append((place_call(Call(callee=number, timing=timing), address), t0))
    results = {}
    for kind, calls_ in placed.items():
        call_bench._wait_all(calls_, 30)
        delays = [d * 1000 for d in (call_bench._first_execute_delay(c, t0) for c, t0 in calls_) if d is not None]
        results[kind] = (_p(delays, 50), _p(delays, 99), len(delays))
    w, wo = results["with"], results["without"]
    print(f"call setup (TCP connect -> first execute), {w[2]}+{wo[2]} calls interleaved at {RATE // 2}/s each:")
    print(f"  with metrics    p50 {w[0]:.2f} ms  p99 {w[1]:.2f} ms")
    print(f"  without metrics p50 {wo[0]:.2f} ms  p99 {wo[1]:.2f} ms")
    print(f"  p50 difference {w[0] - wo[0]:+.2f} ms (noise between two identical children is of the same order)")


def measure_operations() -> None:
    from prometheus_client import CollectorRegistry, Counter, Histogram

    registry = CollectorRegistry()
    plain = Counter("bench_plain", "x", registry=registry)
    labelled = Counter("bench_labelled", "x", ["status", "direction"], registry=registry)
    hist = Histogram("bench_hist", "x", registry=registry,
                     buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
    n = 200_000
    figures = {
        "counter inc": timeit.timeit(plain.inc, number=n) / n,
        "labelled counter inc": timeit.timeit(lambda: labelled.labels("completed", "inbound").inc(), number=n) / n,
        "histogram observe": timeit.timeit(lambda: hist.observe(0.004), number=n) / n,
    }
    for name, seconds in figures.items():
        print(f"  {name}: {seconds * 1e9:.0f} ns")
    # per answered webhook call: setup observe, in-progress inc+dec, finished inc, webhook observe+inc
    per_call = (figures["histogram observe"] * 2 + figures["labelled counter inc"] * 4)
    print(f"  call path total per webhook call (6 operations): {per_call * 1e6:.1f} us")


def measure_readyz(requests: int) -> None:
    import socket
    import urllib.request

    from app.ops.health import Readiness, dependency_checks
    from app.ops.http import OpsEndpoints, start_ops_server
    from app.ops.metrics import render
    from app.settings import get_settings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = start_ops_server(OpsEndpoints(Readiness("bench", dependency_checks(get_settings()))), "127.0.0.1", port)
    try:
        timings, statuses = [], set()
        for _ in range(requests):
            t0 = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as response:
                response.read()
                statuses.add(response.status)
            timings.append((time.perf_counter() - t0) * 1000)
        print(f"/readyz over HTTP, {requests} requests (statuses {sorted(statuses)}): "
              f"p50 {_p(timings, 50):.1f} ms  p95 {_p(timings, 95):.1f} ms")
        render_ms = [timeit.timeit(render, number=1) * 1000 for _ in range(50)]
        print(f"/metrics render: p50 {statistics.median(render_ms):.2f} ms")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--no-metrics", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, metrics=not args.no_metrics)
        return
    call_bench._raise_fd_limit()
    short, _ = call_bench._setup_database()
    base = 19000 + os.getpid() % 500
    children = []
    try:
        children = [_start(base, True), _start(base + 1, False)]
        measure_setup(short, ("127.0.0.1", base), ("127.0.0.1", base + 1), 60 if args.quick else 200)
        print("instrumentation cost per operation:")
        measure_operations()
        measure_readyz(20 if args.quick else 50)
    finally:
        for child in children:
            child.terminate()
            child.wait(10)
        call_bench._drop_database()


if __name__ == "__main__":
    main()
