"""Recovery times after injected faults (issue 16): figures, not pass/fail.

- restart: a real ``sbc run``; its controller child is SIGKILLed ``--kills`` times; time from
  the kill until the controller accepts connections again (the supervisor's backoff plus the
  process start), and whether the API answered meanwhile;
- redis: ``--releases`` limiter slots released while Redis is cut off (behind a TCP relay);
  time from Redis answering again until every held release is replayed;
- records: ``--records`` call records written while PostgreSQL is cut off (behind a TCP relay)
  are held by the record backlog; time from the database answering again until all are written.

Nothing real is stopped: Redis and PostgreSQL stay up, only the relay between them and the
product is cut. Uses a throw-away database, Redis key prefix and RabbitMQ vhost.
Run: .venv/bin/python benchmarks/faults_bench.py [--kills N] [--releases N] [--records N]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

RUN = f"bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
os.environ["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/sbc_{RUN}"
os.environ["SBC_REDIS_KEY_PREFIX"] = f"sbc:{RUN}:"
os.environ["SBC_AMQP_URL"] = f"amqp://guest:guest@127.0.0.1:5672/sbc_{RUN}"
os.environ["SBC_BASE_DOMAIN"] = "localhost"

from app.gevent_setup import patch  # noqa: E402

patch()

import psycopg2  # noqa: E402

from tests.events.tcp_proxy import TcpProxy  # noqa: E402


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60)


def admin(sql: str) -> None:
    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    conn.autocommit = True
    conn.cursor().execute(sql)
    conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def api_answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/openapi.json", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def child_pid(parent: int, command: str) -> int | None:
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(parent)],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, _, args = line.strip().partition(" ")
        if "app.cli" in args and args.split()[3:4] == [command]:
            return int(pid)
    return None


def until(predicate, timeout: float) -> float:
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise TimeoutError("condition not reached")
        time.sleep(0.02)
    return time.monotonic() - started


def bench_restart(kills: int) -> None:
    if kills < 1:
        return
    from app.config import set_value

    api_port, ctl_port = free_port(), free_port()
    set_value("controller.listen", {"host": "127.0.0.1", "port": ctl_port}, announce=False)
    set_value("freeswitch.nodes", [{"host": "127.0.0.1", "port": free_port(), "password": "x"}],
              announce=False)
    set_value("health.controller_port", free_port(), announce=False)
    set_value("health.workers_port", free_port(), announce=False)
    with open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "run", "--api-port", str(api_port)],
                                cwd=ROOT, stdout=devnull, stderr=devnull)
    try:
        until(lambda: api_answers(api_port) and listening(ctl_port), 90)
        times, api_ok = [], 0
        for _ in range(kills):
            victim = child_pid(proc.pid, "controller")
            os.kill(victim, signal.SIGKILL)
            killed = time.monotonic()
            until(lambda: not listening(ctl_port), 5)
            api_ok += api_answers(api_port)
            until(lambda: listening(ctl_port), 60)
            times.append(time.monotonic() - killed)
            time.sleep(31)  # stable again: the next kill is not a "fast crash"
        print(f"restart: controller SIGKILL -> accepting again: median {statistics.median(times):.2f} s "
              f"(each: {', '.join(f'{t:.2f}' for t in times)}); API answered during {api_ok}/{kills}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def bench_redis(releases: int) -> None:
    import redis

    from app.calls.limiter import ConcurrencyLimiter

    proxy = TcpProxy(("127.0.0.1", 6379)).start()
    client = redis.Redis(host="127.0.0.1", port=proxy.port, socket_timeout=2, socket_connect_timeout=2)
    limiter = ConcurrencyLimiter(client)
    truth = ConcurrencyLimiter(redis.Redis.from_url("redis://127.0.0.1:6379/0"))
    account = uuid.uuid4()
    ids = [str(uuid.uuid4()) for _ in range(releases)]
    for call_id in ids:
        limiter.acquire(call_id, account, 0)
    proxy.refuse()
    proxy.reset()
    limiter.release(*ids[:1])  # discovers the outage
    limiter.release(*ids[1:])
    time.sleep(2.0)
    healed = time.monotonic()
    proxy.heal()
    until(lambda: not limiter.outage.down, 60)
    replay = time.monotonic() - healed
    left = truth.counts(account)[0]
    print(f"redis: {releases} releases held during a 2 s outage, replayed {replay:.2f} s after Redis "
          f"answered (probe backoff included); slots left: {left}")
    proxy.stop()


def bench_records(records: int) -> None:
    from sqlalchemy import func, make_url, select

    from app.accounts.service import create_tenant
    from app.calls.hangup import ObservedHangup
    from app.calls.record_backlog import RecordBacklog
    from app.calls.records import CallContext, write_call_record
    from app.db import engine as db_engine
    from app.models import CallRecord
    from app.settings import get_settings

    account = create_tenant(f"bench{uuid.uuid4().hex[:8]}", "admin", "bench-password-123",
                            bcrypt_rounds=4)
    settings = get_settings()
    target = make_url(settings.platform_database_url)
    proxy = TcpProxy((target.host or "127.0.0.1", target.port or 5432)).start()

    def through(url: str) -> str:
        return make_url(url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)

    relayed = dataclasses.replace(settings, app_database_url=through(settings.app_database_url),
                                  platform_database_url=through(settings.platform_database_url))
    db_engine.reset_engines()
    original = db_engine.get_settings
    db_engine.get_settings = lambda: relayed
    try:
        backlog = RecordBacklog()
        proxy.refuse()
        proxy.reset()
        now = int(time.time() * 1_000_000)
        for _ in range(records):
            call_id = str(uuid.uuid4())
            hangup = ObservedHangup(call_id=call_id, caller="15550001", callee="15550002",
                                    direction="inbound", hangup_cause="NORMAL_CLEARING",
                                    started_us=now - 60_000_000, ended_us=now,
                                    answered_us=now - 55_000_000)
            backlog.write(hangup, CallContext(account_id=account.id, trace_id=uuid.uuid4()), call_id)
        time.sleep(2.0)
        healed = time.monotonic()
        proxy.heal()
        until(lambda: not backlog.held_call_ids, 300)
        elapsed = time.monotonic() - healed
    finally:
        db_engine.get_settings = original
        db_engine.reset_engines()
        proxy.stop()
    baseline = 200
    started = time.monotonic()
    now = int(time.time() * 1_000_000)
    for _ in range(baseline):  # the same writes straight to PostgreSQL, one by one
        call_id = str(uuid.uuid4())
        write_call_record(ObservedHangup(call_id=call_id, caller="1", callee="2", direction="inbound",
                                         hangup_cause="NORMAL_CLEARING", started_us=now - 1000,
                                         ended_us=now), CallContext(account_id=account.id,
                                                                    trace_id=uuid.uuid4()))
    direct = baseline / (time.monotonic() - started)
    with db_engine.platform_session() as session:
        written = session.scalar(select(func.count()).select_from(CallRecord)
                                 .where(CallRecord.account_id == account.id))
    print(f"records: {records} call records held during a 2 s outage, all written {elapsed:.2f} s "
          f"after PostgreSQL answered ({written - baseline} in the table, {records / elapsed:.0f} "
          f"records/s including the retry backoff; the same write one by one without a relay: "
          f"{direct:.0f} records/s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--releases", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=1_000)
    args = parser.parse_args()
    name = f"sbc_{RUN}"
    rabbitmqctl("add_vhost", name)
    rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")
    admin(f'CREATE DATABASE "{name}"')
    try:
        from app.db.migrate import upgrade

        upgrade(os.environ["SBC_DATABASE_URL"])
        bench_redis(args.releases)
        bench_records(args.records)
        bench_restart(args.kills)
    finally:
        from app.db.engine import reset_engines

        reset_engines()
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        rabbitmqctl("delete_vhost", name)
        import redis

        client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
        keys = list(client.scan_iter(match=f"sbc:{RUN}:*"))
        if keys:
            client.delete(*keys)


if __name__ == "__main__":
    main()
