"""REST API throughput on this machine: figures, not pass/fail.

Starts ``sbc api`` (gevent pywsgi, one process) in a subprocess against a throw-away database,
then drives it from this process with a bounded number of requests over keep-alive HTTP/1.1
connections (one per client thread):

- ``POST /auth/login``  — dominated by bcrypt at the production cost (12) by design;
- ``GET /api/api-keys`` — a typical authenticated read: JWT check, identity re-read under RLS,
  license check, one tenant-scoped SELECT, JSON out;
- ``GET /api/account`` with the login token and with an API key (``Bearer sk_…``) in the same
  run: the cost of key authentication (account lookup by subdomain, key row under RLS, scope
  check; ``last_used_at`` written at most once a minute) against the JWT path.

Run: .venv/bin/python benchmarks/api_bench.py [--logins N] [--gets N] [--clients C]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

PASSWORD = "bench-password-123"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


class Driver:
    """One keep-alive connection per thread; bounded request count split across clients."""

    def __init__(self, port: int, host: str) -> None:
        self.port, self.host = port, host
        self.local = threading.local()

    def _conn(self) -> http.client.HTTPConnection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        return conn

    def call(self, method: str, path: str, body: dict | None = None, token: str | None = None) -> tuple[int, bytes, float]:
        headers = {"Host": self.host}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        start = time.perf_counter()
        conn = self._conn()
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        payload = response.read()
        return response.status, payload, time.perf_counter() - start

    def run(self, n: int, clients: int, fn) -> tuple[float, list[float]]:
        latencies: list[float] = []
        lock = threading.Lock()

        def worker(count: int) -> None:
            mine = []
            for _ in range(count):
                status, payload, elapsed = fn()
                if status != 200:
                    raise RuntimeError(f"unexpected {status}: {payload[:200]!r}")
                mine.append(elapsed)
            with lock:
                latencies.extend(mine)

        shares = [n // clients + (1 if i < n % clients else 0) for i in range(clients)]
        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            for future in [pool.submit(worker, s) for s in shares if s]:
                future.result()
        return time.perf_counter() - start, latencies


def report(name: str, n: int, clients: int, wall: float, latencies: list[float]) -> None:
    print(f"{name:<28} n={n:<6} clients={clients:<3} {n / wall:8.1f} req/s   "
          f"p50 {statistics.median(latencies) * 1000:7.2f} ms   p95 {percentile(latencies, 95) * 1000:7.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=60)
    parser.add_argument("--gets", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()

    run = f"bench_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    env = dict(os.environ)
    env["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/sbc_{run}"
    env.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)
    os.environ.update({k: env[k] for k in ("SBC_DATABASE_URL", "SBC_JWT_SECRET")})

    import psycopg2

    from app.accounts.service import create_tenant
    from app.db.engine import reset_engines
    from app.db.migrate import upgrade

    admin = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "sbc_{run}"')
    proc = None
    try:
        upgrade(env["SBC_DATABASE_URL"])
        subdomain = "bench" + uuid.uuid4().hex[:6]
        create_tenant(subdomain, "admin", PASSWORD, ["api-access", "queue-mgmt"])  # bcrypt cost 12
        reset_engines()
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import main; main()", "api",
             "--host", "127.0.0.1", "--port", str(port), "--no-access-log"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        wait_listening(port, proc)
        driver = Driver(port, f"{subdomain}.localhost")
        login_body = {"username": "admin", "password": PASSWORD}
        status, payload, _ = driver.call("POST", "/auth/login", login_body)
        assert status == 200, payload
        token = json.loads(payload)["token"]
        for i in range(5):  # a few keys so the GET returns a realistic list
            driver.call("POST", "/api/api-keys", {"name": f"k{i}", "scopes": ["calls"]}, token)
        status, payload, _ = driver.call("POST", "/api/api-keys", {"name": "bench", "scopes": ["account"]}, token)
        api_key = json.loads(payload)["key"]
        driver.run(100, args.clients, lambda: driver.call("GET", "/api/api-keys", token=token))  # warm-up
        driver.run(100, args.clients, lambda: driver.call("GET", "/api/account", token=api_key))

        print(f"# sbc api (gevent pywsgi, 1 process) on {os.cpu_count()} CPUs; driver in another "
              f"process; load average before: {os.getloadavg()[0]:.2f}")
        for clients in sorted({1, args.clients}):
            wall, lat = driver.run(args.logins, clients, lambda: driver.call("POST", "/auth/login", login_body))
            report("POST /auth/login (bcrypt12)", args.logins, clients, wall, lat)
        for clients in sorted({1, args.clients}):
            wall, lat = driver.run(args.gets, clients, lambda: driver.call("GET", "/api/api-keys", token=token))
            report("GET /api/api-keys", args.gets, clients, wall, lat)
        for clients in sorted({1, args.clients}):
            for label, credential in (("JWT", token), ("API key", api_key)):
                wall, lat = driver.run(args.gets, clients,
                                       lambda c=credential: driver.call("GET", "/api/account", token=c))
                report(f"GET /api/account ({label})", args.gets, clients, wall, lat)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        from app.db.engine import reset_engines as _reset

        _reset()
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "sbc_{run}" WITH (FORCE)')
        admin.close()


if __name__ == "__main__":
    main()
