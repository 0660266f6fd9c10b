"""LCR figures: lookup latency with 10,000 routes across 100 plans, and the cost of a reload.

Run: .venv/bin/python benchmarks/lcr_bench.py [--plans 100] [--routes 10000] [--lookups 20000]

Prints p50/p99 of ``LcrTable.select`` (plan + route match) and of ``LcrTable.explain``
(the full decision: carriers, gateways, down-gateway filtering) and the compile time of the
whole table (what ``routing.config.changed`` costs the controller). Figures, not assertions.

Two engines, same run, same data: ``RE2`` (what the router uses: ``compile_route_regex``) and,
for comparison, Python's backtracking ``re`` (the engine before RE2; compiled here only, by
swapping the compile function for the duration of its measurement). ``--engine`` picks one.
A last line times one backtracking-shaped route (``^(1+)+$``) on 25 ones and a 2 in each engine.
"""
from __future__ import annotations

import argparse
import contextlib
import random
import re
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a plain script too

from app.routing.cache import compile_routing
from app.routing.lcr import normalize_number
from app.routing.rows import (
    AccountRow,
    CarrierEntryRow,
    CarrierRow,
    GatewayRow,
    PlanRow,
    RouteRow,
    RoutingRows,
)


def build(plans: int, routes: int, seed: int = 7) -> tuple[RoutingRows, list[uuid.UUID]]:
    rng = random.Random(seed)
    carriers = [CarrierRow(uuid.uuid4(), f"carrier-{i}", tech_prefix=rng.choice(["", "", "9#"])) for i in range(40)]
    gateways = [GatewayRow(uuid.uuid4(), c.id, f"198.51.{i // 250}.{i % 250 + 1}", outbound=True)
                for i, c in enumerate(carriers * 2)]
    accounts = [AccountRow(uuid.uuid4()) for _ in range(plans - 10)]
    plan_rows = [PlanRow(uuid.uuid4(), f"acct-{i}", a.id) for i, a in enumerate(accounts)]
    plan_rows += [PlanRow(uuid.uuid4(), f"platform-{i}", None, i) for i in range(plans - len(plan_rows))]
    route_rows, entries = [], []
    per_plan = routes // len(plan_rows)
    shapes = ["^{p}", "^{p}\\d+$", "{p}", "^{p}[0-9]{{6,}}"]
    for plan in plan_rows:
        for _ in range(per_plan):
            prefix = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 5)))
            route = RouteRow(uuid.uuid4(), plan.id, rng.choice(shapes).format(p=prefix), rng.randint(0, 100))
            route_rows.append(route)
            for carrier in rng.sample(carriers, 3):
                entries.append(CarrierEntryRow(uuid.uuid4(), route.id, carrier.id, rng.randint(0, 3), rng.randint(1, 100)))
    # a few unanchored/alternation routes that defeat the prefix index (worst case kept honest)
    for plan in plan_rows[::10]:
        route_rows.append(RouteRow(uuid.uuid4(), plan.id, "^(33|34)\\d+", 50))
    rows = RoutingRows(tuple(carriers), tuple(gateways), tuple(plan_rows), tuple(route_rows),
                       tuple(entries), tuple(accounts))
    return rows, [a.id for a in accounts]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextlib.contextmanager
def engine(name: str):
    """Route regexes compiled by ``name`` ("re2": the product's; "python-re": the old engine)."""
    from app.routing import lcr as lcr_module

    original = lcr_module.compile_route_regex
    if name == "python-re":
        lcr_module.compile_route_regex = re.compile
    lcr_module._REGEX_CACHE.clear()
    try:
        yield
    finally:
        lcr_module.compile_route_regex = original
        lcr_module._REGEX_CACHE.clear()


def measure(label: str, rows: RoutingRows, account_ids: list[uuid.UUID], args: argparse.Namespace) -> None:
    from app.routing import lcr as lcr_module
    cold, warm = [], []
    for _ in range(3):
        lcr_module._REGEX_CACHE.clear()
        started = time.perf_counter()
        compile_routing(rows)
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        table = compile_routing(rows)  # the usual reload: regexes already compiled
        warm.append(time.perf_counter() - started)
    rng = random.Random(11)
    numbers = ["1" + "".join(rng.choice("0123456789") for _ in range(10)) for _ in range(1000)]
    numbers += [str(rng.randint(2, 9)) + "".join(rng.choice("0123456789") for _ in range(11)) for _ in range(1000)]
    down = frozenset(g.id for g in rows.gateways[:5])

    select_us, explain_us, matched = [], [], 0
    for i in range(args.lookups):
        number = numbers[i % len(numbers)]
        account = account_ids[i % len(account_ids)]
        normalized = normalize_number(number)
        t0 = time.perf_counter()
        found = table.lcr.select(normalized, account)
        t1 = time.perf_counter()
        table.explain(number, account, down)
        t2 = time.perf_counter()
        select_us.append((t1 - t0) * 1e6)
        explain_us.append((t2 - t1) * 1e6)
        matched += found is not None

    print(f"== engine: {label}")
    print(f"routes compiled: {table.lcr.route_count} across {args.plans} plans "
          f"({len(account_ids)} account plans + {args.plans - len(account_ids)} platform plans)")
    print(f"lookups: {args.lookups}, matched: {matched / args.lookups:.0%}")
    print(f"select  (plan+route)      p50 {percentile(select_us, .50):7.1f} us   p99 {percentile(select_us, .99):7.1f} us   "
          f"mean {statistics.mean(select_us):6.1f} us")
    print(f"explain (full decision)   p50 {percentile(explain_us, .50):7.1f} us   p99 {percentile(explain_us, .99):7.1f} us   "
          f"mean {statistics.mean(explain_us):6.1f} us")
    print(f"reload, cold (new regexes) min {min(cold) * 1000:7.1f} ms   max {max(cold) * 1000:7.1f} ms")
    print(f"reload, warm (same regexes) min {min(warm) * 1000:7.1f} ms   max {max(warm) * 1000:7.1f} ms")

    # Worst case: one account sees all plans (100 platform plans) and the number matches none.
    worst_rows = RoutingRows(rows.carriers, rows.gateways,
                             tuple(type(p)(p.id, p.name, None, i) for i, p in enumerate(rows.plans)),
                             rows.routes, rows.entries)
    worst = compile_routing(worst_rows)
    misses = ["0" + "".join(rng.choice("0123456789") for _ in range(11)) for _ in range(500)]
    hits = numbers[:500]
    for what, sample in (("miss in all 100 plans", misses), ("hit, 100 plans in scope", hits)):
        times = []
        for i in range(args.lookups // 4):
            number = sample[i % len(sample)]
            t0 = time.perf_counter()
            worst.lcr.select(number, None)
            times.append((time.perf_counter() - t0) * 1e6)
        print(f"select  ({what:24s}) p50 {percentile(times, .50):7.1f} us   p99 {percentile(times, .99):7.1f} us")

    from app.routing.lcr import compile_route_regex as compile_now
    hostile = compile_now("^(1+)+$")
    t0 = time.perf_counter()
    hostile.match("1" * 25 + "2")
    print(f"one route ^(1+)+$ on 25 ones + 2: {(time.perf_counter() - t0) * 1000:9.3f} ms "
          "(doubles per extra digit with a backtracking engine)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plans", type=int, default=100)
    parser.add_argument("--routes", type=int, default=10_000)
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--engine", choices=("both", "re2", "python-re"), default="both")
    args = parser.parse_args()

    rows, account_ids = build(args.plans, args.routes)
    names = ("python-re", "re2") if args.engine == "both" else (args.engine,)
    for name in names:
        with engine(name):
            measure({"re2": "RE2 (router)", "python-re": "Python re (before RE2)"}[name], rows, account_ids, args)


if __name__ == "__main__":
    main()
