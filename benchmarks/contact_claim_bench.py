"""Queue distribution figures on this machine: figures, not pass/fail.

The atomic claim (app/contact/presence.py, one Lua script) under contention: 500 callers
waiting in one queue and 200 idle, registered agents, claimed by 2 controllers — two OS
processes (each its own Redis connection, 25 greenlets) — every contender claiming for the
caller first in line, as the waiting callers' sessions do. Per strategy (longest_idle,
round_robin, fewest_calls, ring_all; all agents tier 1 except in the ``tiers`` run: four
tiers, longest_idle within each). Printed per strategy:

- claim latency p50/p99/max of every Lua call as the contender sees it (the ones that assign
  and the ones that lose the race: the assignment decision, including the wait behind the
  other 49 contenders and their greenlets), the script's own mean time inside Redis (INFO
  commandstats: evalsha usec_per_call, over the whole run), and alone (one greenlet, one
  process, no contention);
- assignments, double assignments of an agent or a caller over all rounds (10,000 agent
  assignments in total by default: 50 rounds x 200 agents), and whether caller k in line got
  the agent the strategy says (longest_idle: the k-th longest idle — exact order; round_robin
  from an empty pointer and fewest_calls with no calls yet: the same order; tiers: tier by
  tier; ring_all: callers get 20 agents each, longest idle first).

``--paced SECONDS`` measures the steady state instead (what the queue verb does): each of the
2 processes drives 250 of the 500 waiting callers, each caller claiming for itself every
QUEUE_CLAIM_INTERVAL_SECONDS (2 s, random phase); an assigned caller talks 1-4 s, then its
agent is idle again and a new caller takes its place in line. Every assignment takes a
``SET NX`` mark on the agent (removed when the call ends): a mark already held is a double
assignment.

Uses a throw-away Redis key prefix, removed at the end. Figures taken while other work runs on
the machine are noisy.
Run: .venv/bin/python benchmarks/contact_claim_bench.py [--rounds N] [--strategy S] [--processes P]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

if "--worker" not in sys.argv:
    RUN = f"bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    os.environ["SBC_REDIS_KEY_PREFIX"] = f"sbc:{RUN}:"

from app.gevent_setup import patch  # noqa: E402

patch()

import gevent  # noqa: E402
import redis  # noqa: E402

from app import limits  # noqa: E402
from app.contact.presence import Candidate, Presence  # noqa: E402
from app.settings import get_settings  # noqa: E402

CALLERS, AGENTS, GREENLETS = 500, 200, 25
ACCOUNT = "bench-account"
RUNS = ("longest_idle", "round_robin", "fewest_calls", "ring_all", "tiers")


def members(run: str) -> list[Candidate]:
    tiers = run == "tiers"
    return [Candidate(f"agent-{n:03d}", "bench", f"ag{n:03d}", 1 + (n % 4 if tiers else 0)) for n in range(AGENTS)]


def strategy_of(run: str) -> str:
    return "longest_idle" if run == "tiers" else run


def contend(presence: Presence, run: str, won: list, latencies: list) -> None:
    """Claim for the caller first in line until no caller or no idle agent is left."""
    cands = members(run)
    strategy = strategy_of(run)
    waiting = presence.waiting_key(ACCOUNT, "q")
    idle = presence.idle_key(ACCOUNT)
    while True:
        head = presence.redis.zrange(waiting, 0, 0)
        if not head or not presence.redis.zcard(idle):
            return
        call = head[0].decode()
        started = time.perf_counter()
        claimed = presence.claim_agents(ACCOUNT, "q", call, cands, strategy=strategy)
        latencies.append(time.perf_counter() - started)
        for c in claimed:
            won.append((call, c.agent_id))
        gevent.sleep(0)


class ScriptTimes:
    """The claim script's own execution time inside Redis, per call: the SLOWLOG with a 0 us
    threshold for the run (the previous settings are put back), keeping this run's EVALSHA
    entries (their first key carries the run's prefix)."""

    def __init__(self, client: "redis.Redis", prefix: str) -> None:
        self.client, self.prefix = client, prefix
        self.saved = {k: client.config_get(k)[k] for k in ("slowlog-log-slower-than", "slowlog-max-len")}
        client.config_set("slowlog-max-len", 1_000_000)
        client.slowlog_reset()
        client.config_set("slowlog-log-slower-than", 0)

    def stop(self) -> list[float]:
        """Milliseconds per claim script call, sorted; settings restored."""
        try:
            self.client.config_set("slowlog-log-slower-than", self.saved["slowlog-log-slower-than"])
            entries = self.client.slowlog_get(1_000_000)
        finally:
            self.client.config_set("slowlog-max-len", self.saved["slowlog-max-len"])
            self.client.slowlog_reset()
        out = []
        for entry in entries:
            command = entry.get("command", b"")
            command = command.decode(errors="replace") if isinstance(command, bytes) else str(command)
            if command.upper().startswith("EVALSHA") and self.prefix in command and ":waiting" in command:
                out.append(entry["duration"] / 1000)
        return sorted(out)


def pct(values: list[float], q: float) -> float:
    return values[max(0, int(len(values) * q) - 1)] if values else float("nan")


def paced_caller(presence: Presence, n: int, seconds: float, stats: dict) -> None:
    """One waiting caller slot: claims for its call every 2 s; when assigned, talks, frees the
    agent and is replaced by a new caller at the back of the line."""
    import random

    cands = members("longest_idle")
    prefix = presence.prefix
    end = time.monotonic() + seconds
    gevent.sleep(random.random() * limits.QUEUE_CLAIM_INTERVAL_SECONDS)
    call = f"call-{n:03d}-0"
    presence.join(ACCOUNT, "q", call)
    generation = 0
    while time.monotonic() < end:
        started = time.perf_counter()
        agent = presence.claim(ACCOUNT, "q", call, cands)
        stats["lat"].append(time.perf_counter() - started)
        if agent is None:
            gevent.sleep(limits.QUEUE_CLAIM_INTERVAL_SECONDS)
            continue
        stats["assigned"] += 1
        if not presence.redis.set(f"{prefix}mark:{agent}", call, nx=True, ex=60):
            stats["doubles"] += 1
        gevent.sleep(1 + random.random() * 3)  # the call
        presence.redis.delete(f"{prefix}mark:{agent}")
        presence.release(ACCOUNT, agent)
        presence.agent_idle(ACCOUNT, agent)
        generation += 1
        call = f"call-{n:03d}-{generation}"
        presence.join(ACCOUNT, "q", call)


def paced_worker(args: argparse.Namespace) -> None:
    settings = get_settings()
    # 250 callers in one process: a blocking pool (redis-py's default pool of 100 raises
    # MaxConnectionsError when more commands are in flight at once)
    pool = redis.BlockingConnectionPool.from_url(settings.redis_url, max_connections=100, timeout=10)
    presence = Presence(redis.Redis(connection_pool=pool), settings.redis_key_prefix)
    while not presence.redis.get(f"{settings.redis_key_prefix}go:paced"):
        time.sleep(0.002)
    stats = {"lat": [], "assigned": 0, "doubles": 0}
    first = args.slot * (CALLERS // args.processes)
    gevent.joinall([gevent.spawn(paced_caller, presence, n, args.paced, stats)
                    for n in range(first, first + CALLERS // args.processes)])
    presence.redis.rpush(f"{settings.redis_key_prefix}res:paced", json.dumps(stats))


def paced(args: argparse.Namespace) -> None:
    settings = get_settings()
    presence = Presence(redis.Redis.from_url(settings.redis_url), settings.redis_key_prefix)
    setup_round(presence, "longest_idle")
    presence.redis.delete(presence.waiting_key(ACCOUNT, "q"))  # the callers join themselves
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--paced", str(args.paced),
                               "--slot", str(i), "--processes", str(args.processes)], env={**os.environ})
             for i in range(args.processes)]
    time.sleep(2)  # the processes import and wait for the go
    times = ScriptTimes(presence.redis, settings.redis_key_prefix)
    presence.redis.set(f"{settings.redis_key_prefix}go:paced", "1", ex=600)
    presence.redis.config_resetstat()
    results = []
    while len(results) < args.processes:
        got = presence.redis.blpop(f"{settings.redis_key_prefix}res:paced", timeout=1)
        if got:
            results.append(json.loads(got[1]))
    evalsha = presence.redis.info("commandstats").get("cmdstat_evalsha", {})
    inside = times.stop()
    for proc in procs:
        proc.wait(timeout=30)
    ms = sorted(x * 1000 for r in results for x in r["lat"])
    print(f"paced {args.paced:.0f} s: {CALLERS} callers claiming every {limits.QUEUE_CLAIM_INTERVAL_SECONDS} s, "
          f"{AGENTS} agents, {args.processes} controller processes")
    print(f"  claim latency ms p50 {statistics.median(ms):.3f} p99 {ms[int(len(ms) * 0.99) - 1]:.3f} "
          f"max {ms[-1]:.3f} ({len(ms)} Lua calls, {len(ms) / args.paced:.0f}/s; in Redis "
          f"{evalsha.get('usec_per_call', 0.0):.0f} us/call) | assignments "
          f"{sum(r['assigned'] for r in results)} doubles {sum(r['doubles'] for r in results)}")
    print(f"  inside Redis (SLOWLOG, {len(inside)} claim calls) ms p50 {pct(inside, 0.5):.3f} "
          f"p99 {pct(inside, 0.99):.3f} max {inside[-1] if inside else float('nan'):.3f}")


def worker(args: argparse.Namespace) -> None:
    """One controller process: waits for each round's go key, contends, reports in Redis."""
    settings = get_settings()
    presence = Presence(redis.Redis.from_url(settings.redis_url), settings.redis_key_prefix)
    control = presence.redis
    for round_no in range(args.rounds):
        while not control.get(f"{settings.redis_key_prefix}go:{args.run}:{round_no}"):
            time.sleep(0.002)
        won: list = []
        latencies: list = []
        gevent.joinall([gevent.spawn(contend, presence, args.run, won, latencies) for _ in range(args.greenlets)])
        control.rpush(f"{settings.redis_key_prefix}res:{args.run}:{round_no}", json.dumps({"won": won, "lat": latencies}))


def setup_round(presence: Presence, run: str) -> None:
    presence.redis.delete(presence.pointer_key(ACCOUNT, "q"), presence.handled_key(ACCOUNT),
                          presence.idle_key(ACCOUNT), presence.waiting_key(ACCOUNT, "q"))
    pipe = presence.redis.pipeline()
    for n, member in enumerate(members(run)):
        pipe.set(presence.reg_key("bench", member.sip_username), "-", ex=300)
        pipe.delete(presence.engaged_prefix(ACCOUNT) + member.agent_id)
        pipe.zadd(presence.idle_key(ACCOUNT), {member.agent_id: 1_000 + n})
    for n in range(CALLERS):
        pipe.zadd(presence.waiting_key(ACCOUNT, "q"), {f"call-{n:03d}": 10_000 + n})
    pipe.execute()


def expected_order(run: str) -> list[str]:
    """The agents in the order the strategy must hand them to callers 0, 1, 2, ..."""
    cands = members(run)
    if run == "tiers":
        return [c.agent_id for c in sorted(cands, key=lambda c: (c.tier, c.agent_id))]
    return [c.agent_id for c in cands]  # ids, idle-since and (empty) counters all sort alike


def one_strategy(run: str, rounds: int, processes: int, greenlets: int) -> dict:
    settings = get_settings()
    presence = Presence(redis.Redis.from_url(settings.redis_url), settings.redis_key_prefix)
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--run", run,
                               "--rounds", str(rounds), "--greenlets", str(greenlets)],
                              env={**os.environ}) for _ in range(processes)]
    latencies: list[float] = []
    assignments = doubles = order_errors = 0
    presence.redis.config_resetstat()  # server-side cost of the script: INFO commandstats below
    times = ScriptTimes(presence.redis, settings.redis_key_prefix)
    started = time.perf_counter()
    try:
        for round_no in range(rounds):
            setup_round(presence, run)
            presence.redis.set(f"{settings.redis_key_prefix}go:{run}:{round_no}", "1", ex=600)
            results = []
            deadline = time.monotonic() + 300
            while len(results) < processes and time.monotonic() < deadline:
                # short waits: the client's socket timeout is shorter than a long BLPOP
                got = presence.redis.blpop(f"{settings.redis_key_prefix}res:{run}:{round_no}", timeout=1)
                if got:
                    results.append(json.loads(got[1]))
            if len(results) < processes:
                raise RuntimeError(f"round {round_no}: a controller process never reported")
            won = [tuple(w) for r in results for w in r["won"]]
            for r in results:
                latencies.extend(r["lat"])
            assignments += len(won)
            agents = [a for _, a in won]
            doubles += len(agents) - len(set(agents))
            if run != "ring_all":
                callers = [c for c, _ in won]
                doubles += len(callers) - len(set(callers))
                expected = dict(zip((f"call-{n:03d}" for n in range(CALLERS)), expected_order(run)))
                order_errors += sum(1 for call, agent in won if expected.get(call) != agent)
            else:  # caller k gets agents 20k .. 20k+19 (longest idle first)
                legs = limits.QUEUE_RING_ALL_MAX_LEGS
                order_errors += sum(1 for call, agent in won
                                    if int(agent.split("-")[1]) // legs != int(call.split("-")[1]))
    finally:
        inside = times.stop()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    elapsed = time.perf_counter() - started
    evalsha = presence.redis.info("commandstats").get("cmdstat_evalsha", {})
    ms = sorted(x * 1000 for x in latencies)
    return {"run": run, "calls": len(ms), "p50": statistics.median(ms), "p99": ms[int(len(ms) * 0.99) - 1],
            "max": ms[-1], "rate": len(ms) / elapsed, "assignments": assignments, "doubles": doubles,
            "order_errors": order_errors, "server_us": evalsha.get("usec_per_call", 0.0),
            "in50": pct(inside, 0.5), "in99": pct(inside, 0.99), "inmax": inside[-1] if inside else float("nan")}


def alone(run: str) -> tuple[float, float]:
    settings = get_settings()
    presence = Presence(redis.Redis.from_url(settings.redis_url), settings.redis_key_prefix)
    lat: list[float] = []
    for _ in range(3):
        setup_round(presence, run)
        contend(presence, run, [], lat)
    ms = sorted(x * 1000 for x in lat)
    return statistics.median(ms), ms[int(len(ms) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--strategy", choices=(*RUNS, "all"), default="all")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--greenlets", type=int, default=GREENLETS)
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--run", default="longest_idle")
    parser.add_argument("--paced", type=float, default=0.0, help="steady-state run of this many seconds")
    parser.add_argument("--slot", type=int, default=0)
    args = parser.parse_args()
    if args.worker:
        paced_worker(args) if args.paced else worker(args)
        return
    if args.paced:
        try:
            paced(args)
        finally:
            client = redis.Redis.from_url(get_settings().redis_url)
            for key in client.scan_iter(match=f"{get_settings().redis_key_prefix}*"):
                client.delete(key)
        return
    settings = get_settings()
    client = redis.Redis.from_url(settings.redis_url)
    print(f"claim: {CALLERS} callers, {AGENTS} agents, {args.processes} controller processes x "
          f"{args.greenlets} greenlets, {args.rounds} rounds per strategy")
    try:
        for run in (RUNS if args.strategy == "all" else (args.strategy,)):
            r = one_strategy(run, args.rounds, args.processes, args.greenlets)
            solo50, solo99 = alone(run)
            print(f"  {run:13s} contended ms p50 {r['p50']:.3f} p99 {r['p99']:.3f} max {r['max']:.3f} "
                  f"({r['calls']} Lua calls, {r['rate']:.0f}/s) | inside Redis p50 {r['in50']:.3f} p99 {r['in99']:.3f} "
                  f"max {r['inmax']:.3f} | alone p50 {solo50:.3f} p99 {solo99:.3f} | "
                  f"assignments {r['assignments']} doubles {r['doubles']} order errors {r['order_errors']}")
    finally:
        for key in client.scan_iter(match=f"{settings.redis_key_prefix}*"):
            client.delete(key)


if __name__ == "__main__":
    main()
