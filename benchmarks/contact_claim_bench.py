"""Queue distribution figures on this machine: figures, not pass/fail.

The atomic claim (app/contact/presence.py, one Lua script) under contention: 500 callers
waiting in one queue and 200 idle, registered agents, claimed by 2 "controllers" (two Redis
connection pools) with 25 greenlets each, every greenlet trying the callers in line order as
the waiting callers' sessions do. Printed:

- claim latency p50/p99/max under that contention (every Lua call, the ones that assign and
  the ones that lose the race), and alone (one greenlet, no contention);
- assignments per round, double assignments of an agent or a caller over all rounds (10,000
  assignments in total by default), and whether every caller k in line got the k-th longest
  idle agent (longest-idle order exact).

Uses a throw-away Redis key prefix, removed at the end.
Run: .venv/bin/python benchmarks/contact_claim_bench.py [--rounds N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

RUN = f"bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
os.environ["SBC_REDIS_KEY_PREFIX"] = f"sbc:{RUN}:"

from app.gevent_setup import patch  # noqa: E402

patch()

import gevent  # noqa: E402
import redis  # noqa: E402

from app.contact.presence import Candidate, Presence  # noqa: E402
from app.settings import get_settings  # noqa: E402

CALLERS, AGENTS, CONTROLLERS, GREENLETS = 500, 200, 2, 25


def one_round(controllers: list[Presence], account: str, latencies: list[float],
              greenlets: int = GREENLETS) -> tuple[list, list, list]:
    members = [Candidate(f"agent-{n:03d}", "bench", f"ag{n:03d}") for n in range(AGENTS)]
    setup = controllers[0]
    for n, member in enumerate(members):
        setup.registered("bench", member.sip_username, 300)
        setup.release(account, member.agent_id)
        setup.agent_idle(account, member.agent_id, since_ms=1_000 + n)
    callers = [f"call-{n:03d}" for n in range(CALLERS)]
    for n, call in enumerate(callers):
        setup.join(account, "q", call, enqueued_ms=10_000 + n)
    won: list[tuple[str, str]] = []
    taken: set[str] = set()

    def contend(presence: Presence) -> None:
        """Every greenlet races for the caller first in line (its session knows once it is
        assigned): the worst case, all contenders on the same caller at once."""
        head = 0
        while head < CALLERS and len(won) < AGENTS:
            call = callers[head]
            if call in taken:
                head += 1
                continue
            started = time.perf_counter()
            agent = presence.claim(account, "q", call, members)
            latencies.append(time.perf_counter() - started)
            if agent:
                won.append((call, agent))
                taken.add(call)
            gevent.sleep(0)

    gevent.joinall([gevent.spawn(contend, controllers[i % len(controllers)])
                    for i in range(len(controllers) * greenlets)])
    for call in callers:
        setup.leave(account, "q", call)
    return won, callers, members


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    settings = get_settings()
    clients = [redis.Redis.from_url(settings.redis_url) for _ in range(CONTROLLERS)]
    controllers = [Presence(c, settings.redis_key_prefix) for c in clients]
    account = str(uuid.uuid4())
    latencies: list[float] = []
    assignments = doubles = order_errors = 0
    started = time.perf_counter()
    try:
        for _ in range(args.rounds):
            won, callers, members = one_round(controllers, account, latencies)
            assignments += len(won)
            doubles += (len(won) - len({a for _, a in won})) + (len(won) - len({c for c, _ in won}))
            expected = dict(zip(callers, (m.agent_id for m in members)))
            order_errors += sum(1 for call, agent in won if expected.get(call) != agent)
    finally:
        for key in clients[0].scan_iter(match=f"{settings.redis_key_prefix}*"):
            clients[0].delete(key)
    elapsed = time.perf_counter() - started
    alone: list[float] = []
    try:
        for _ in range(3):
            won_alone = one_round(controllers[:1], account, alone, greenlets=1)[0]
            assert len(won_alone) == AGENTS
    finally:
        for key in clients[0].scan_iter(match=f"{settings.redis_key_prefix}*"):
            clients[0].delete(key)
    solo = sorted(x * 1000 for x in alone)
    ms = sorted(x * 1000 for x in latencies)
    print(f"claim: {CALLERS} callers, {AGENTS} agents, {CONTROLLERS} controllers x {GREENLETS} greenlets, "
          f"{args.rounds} rounds")
    print(f"  contended claim latency ms: p50 {statistics.median(ms):.3f}  p99 {ms[int(len(ms) * 0.99) - 1]:.3f}  "
          f"max {ms[-1]:.3f}  ({len(ms)} Lua calls, {len(ms) / elapsed:.0f}/s)")
    print(f"  alone (1 greenlet): p50 {statistics.median(solo):.3f}  p99 {solo[int(len(solo) * 0.99) - 1]:.3f}")
    print(f"  assignments {assignments} (expected {AGENTS * args.rounds}), double assignments {doubles}, "
          f"longest-idle order errors {order_errors}")


if __name__ == "__main__":
    main()
