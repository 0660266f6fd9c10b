"""Call engine figures against the FreeSWITCH simulator. Figures, not pass/fail.

The controller (OutboundServer + the production CallSession, real PostgreSQL, Redis) runs in
a child process; the simulator dials it from this process, as FreeSWITCH's ``socket`` app
would, so the two do not share a CPU core's event loop (the machine has two cores).

Printed:
1. call-setup overhead: from the simulator opening the TCP connection to the controller's
   first ``sendmsg execute`` arriving, p50/p99, at 50 calls/s (goal p50 < 5 ms). It includes
   the number lookup (PostgreSQL), the limiter (Redis), ``call.started`` (outbox insert) and
   the simulator's own socket handling, so it is an upper bound on the controller's share;
2. the highest sustained calls/s with zero failed calls (each call: answer, speak, hangup,
   call record), stepping the rate up (goal 200);
3. controller memory per concurrent call with 2,000 calls held (RSS growth / calls; goal
   < 100 KB).
ESL parse/dispatch throughput is esl_parse_bench.py.

Run: .venv/bin/python benchmarks/call_bench.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
RUN = f"bench_call_{os.getpid()}"
os.environ.setdefault("SBC_DATABASE_URL", f"postgresql://postgres@127.0.0.1:5432/sbc_{RUN}")
os.environ.setdefault("SBC_REDIS_KEY_PREFIX", f"sbc:{RUN}:")
os.environ.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)

from app.gevent_setup import patch  # noqa: E402

patch()

import gevent  # noqa: E402

SHORT_CALL = [{"verb": "say", "text": "Hello"}]
HELD_CALL = [{"verb": "pause", "length": 600}]


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# -- controller child -------------------------------------------------------------------------
def serve(port: int) -> None:
    import logging

    import redis

    from app.calls.limiter import ConcurrencyLimiter
    from app.settings import get_settings
    from app.voice.services import CallServices
    from app.voice.session import CallSession
    from app.webhooks.client import WebhookClient
    from esl.outbound import OutboundServer

    logging.basicConfig(level=logging.ERROR)
    _raise_fd_limit()
    client = redis.Redis.from_url(get_settings().redis_url)
    services = CallServices(limiter=ConcurrencyLimiter(client), redis=client,
                            webhooks=WebhookClient(), recordings_dir="/tmp", ws_vendor="bench")
    server = OutboundServer(lambda conn: CallSession(conn, services).run(), "127.0.0.1", port,
                            max_connections=5000)
    server.start()
    print("ready", flush=True)
    server.serve_forever()


# -- driver -----------------------------------------------------------------------------------
def _setup_database() -> tuple[str, str]:
    import psycopg2

    from app.accounts.service import create_tenant
    from app.db.engine import tenant_session
    from app.db.migrate import upgrade
    from app.models import Application, PhoneNumber

    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    conn.autocommit = True
    conn.cursor().execute(f"CREATE DATABASE sbc_{RUN}")
    conn.close()
    upgrade()
    account = create_tenant(f"bench{os.getpid()}", "admin", "bench-password-1", bcrypt_rounds=4)
    numbers = []
    with tenant_session(account.id) as session:
        for i, verbs in enumerate((SHORT_CALL, HELD_CALL)):
            app = Application(account_id=account.id, name=f"bench {i}", app_json=verbs)
            session.add(app)
            session.flush()
            number = f"1800555{os.getpid() % 1000:03d}{i}"
            session.add(PhoneNumber(account_id=account.id, number=number, application_id=app.id))
            numbers.append(number)
    return numbers[0], numbers[1]


def _drop_database() -> None:
    import psycopg2

    from app.db.engine import reset_engines

    reset_engines()
    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    conn.autocommit = True
    conn.cursor().execute(f"DROP DATABASE IF EXISTS sbc_{RUN} WITH (FORCE)")
    conn.close()


def _first_execute_delay(call, started: float) -> float | None:
    for cmd in call.commands:
        if cmd.name == "sendmsg" and cmd.app:
            return cmd.at - started
    return None


def _place_at_rate(number: str, address, rate: float, seconds: float, *, hold: bool = False):
    from tests.simulator import Call, Timing, place_call

    timing = Timing(speak=0.02)
    placed = []
    interval = 1.0 / rate
    start = time.monotonic()
    for i in range(int(rate * seconds)):
        target = start + i * interval
        delay = target - time.monotonic()
        if delay > 0:
            gevent.sleep(delay)
        t0 = time.monotonic()
        placed.append((place_call(Call(callee=number, timing=timing), address), t0))
    return placed


def _succeeded(call) -> bool:
    apps = [c.app for c in call.commands if c.name == "sendmsg" and c.app]
    return call.done.is_set() and call.error is None and apps[:2] == ["answer", "speak"]


def _wait_all(placed, seconds: float) -> None:
    """One deadline for the whole batch: a stuck call counts as failed, it does not stall."""
    deadline = time.monotonic() + seconds
    for call, _ in placed:
        call.wait(max(0.0, deadline - time.monotonic()))


def _describe_failure(call) -> str:
    last = call.commands[-1].line if call.commands else "nothing"
    return (f"call {call.uuid}: done={call.done.is_set()} error={call.error!r} "
            f"commands={len(call.commands)} last={last!r}")


def measure_setup(number: str, address, calls: int) -> None:
    placed = _place_at_rate(number, address, 50, calls / 50)
    _wait_all(placed, 30)
    delays = sorted(d * 1000 for d in (_first_execute_delay(c, t0) for c, t0 in placed) if d is not None)
    q = statistics.quantiles(delays, n=100)
    print(f"call setup (TCP connect -> first execute), {len(delays)} calls at 50/s: "
          f"p50 {q[49]:.2f} ms, p99 {q[98]:.2f} ms  (goal p50 < 5 ms)")


def measure_max_rate(number: str, address, seconds: float, rates) -> None:
    best = 0
    for rate in rates:
        placed = _place_at_rate(number, address, rate, seconds)
        _wait_all(placed, 30)
        failures = [c for c, _ in placed if not _succeeded(c)]
        print(f"  {rate:>4} calls/s for {seconds:.0f} s: {len(placed)} calls, {len(failures)} failed")
        for call in failures[:3]:
            print("    " + _describe_failure(call))
        if failures:
            break
        best = rate
        gevent.sleep(1.0)
    print(f"highest sustained rate with zero failed calls: {best} calls/s  (goal 200)")


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def measure_memory(number: str, address, pid: int, held: int) -> None:
    gevent.sleep(1.0)
    before = _rss_kb(pid)
    placed = _place_at_rate(number, address, 200, held / 200)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        up = sum(any(c.app == "sleep" for c in call.commands) for call, _ in placed)
        if up == len(placed):
            break
        gevent.sleep(0.5)
    gevent.sleep(1.0)
    after = _rss_kb(pid)
    print(f"memory with {up} calls held: RSS {before / 1024:.1f} MB -> {after / 1024:.1f} MB, "
          f"{(after - before) / max(up, 1):.1f} KB per call  (goal < 100 KB)")
    for call, _ in placed:
        call.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    _raise_fd_limit()
    short, held = _setup_database()
    port = 18000 + os.getpid() % 1000
    child = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], stdout=subprocess.PIPE,
                             env=os.environ.copy(), text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        address = ("127.0.0.1", port)
        measure_setup(short, address, 100 if args.quick else 500)
        measure_max_rate(short, address, 2 if args.quick else 5,
                         (100, 200) if args.quick else (100, 150, 200, 250, 300, 400))
        measure_memory(held, address, child.pid, 200 if args.quick else 2000)
    finally:
        child.terminate()
        child.wait(10)
        _drop_database()


if __name__ == "__main__":
    main()
