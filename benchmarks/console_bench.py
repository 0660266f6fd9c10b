"""The web console: figures, not pass/fail (issue 22's goals: the first page at most 250 KB of
JavaScript gzipped; call records usable in under 1 s with 10,000 records; the live view p95
under 1 s from a bus event to the screen).

1. **JS shipped for the first page.**
Asks ``sbc api``'s application (Flask's test client, no server or database needed) for
``/console/`` as a browser does, then for every script and module preload the page names, with
``Accept-Encoding: gzip``: the bytes counted are the bytes the API sends (it gzips the console's
assets itself). Chunks loaded later (a screen opened afterwards, e.g. Call records) are listed
apart: they are not part of the first page.

2. **Call records usable** (``--records N``, default 10,000; ``--records 0`` skips it): a
private database (benchmarks/private_stack.py) with N call records of one tenant, the real
``sbc api``, and Debian's chromium (web/e2e/measure-call-records.js) opening the Call records
screen ``--runs`` times (fresh page loads, the JS cached as a returning user has it): time from
the navigation's start to the first 50 records on screen, by the page's clock.

3. **Live view latency** (``--live-events N``, default 50; 0 skips it): the real ``sbc api`` on a
private database and vhost, the Live view open in chromium (web/e2e/measure-live.js), and bus
events published through the product's outbox publisher (tests/console/bus_publish.py, as a
controller publishes): time from just before ``emit`` to the figure on screen (a
MutationObserver in the page; the same machine's clock), for a caller queued (the server reads
the board again) and for ``queue.metrics`` (pushed as it is). Goal: p95 < 1 s.

Run after the build (bash scripts/install): .venv/bin/python benchmarks/console_bench.py
The machine is shared and noisy: compare figures within one run only.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import private_stack  # noqa: E402  (before app: it sets the environment)

RUN = private_stack.configure("console")

from app.api.console import ASSETS_DIR, STATIC_DIR  # noqa: E402

GOAL_KB = 250
GOAL_USABLE_MS = 1000
GOAL_LIVE_MS = 1000
PASSWORD = "bench-console-password-1"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


@contextlib.contextmanager
def serving_api(work: Path) -> Iterator[int]:
    """The real ``sbc api`` on the private stack; yields its port."""
    from tests.faults.processes import free_port, listening
    from tests.plugins.eventually import eventually

    port = free_port()
    env = dict(os.environ, SBC_BASE_DOMAIN="localhost")
    with open(work / "api.log", "ab") as log:
        api = subprocess.Popen([sys.executable, "-m", "app.cli", "api", "--host", "127.0.0.1", "--port",
                                str(port), "--no-access-log"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        eventually(lambda: listening(port), timeout=60, interval=0.1, what="sbc api listening")
        yield port
    finally:
        api.send_signal(signal.SIGTERM)
        api.wait(15)


def run_browser(script: str, config: dict[str, Any]) -> dict[str, Any]:
    """A measuring script of web/e2e in chromium; its last line of output, as JSON."""
    out = subprocess.run(["node", script], cwd=Path(ROOT) / "web", text=True, capture_output=True, timeout=600,
                         env=dict(os.environ, CONSOLE_BENCH=json.dumps(config)))
    if out.returncode != 0:
        raise RuntimeError(out.stdout + out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(what: str, times: list[float], goal_ms: int) -> None:
    p50, p95 = statistics.median(times), percentile(times, 95)
    print(f"{what}: p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {max(times):.0f} ms; goal p95 < {goal_ms} ms: "
          f"{'met' if p95 < goal_ms else 'NOT met'}")


def call_records_usable(records: int, runs: int) -> None:
    from sqlalchemy import create_engine, pool

    from app.accounts.service import create_tenant
    from app.db.urls import sqlalchemy_url
    from tests.api_management.records_seed import insert_records

    with private_stack.private_stack(RUN) as work:
        subdomain = f"bench-{uuid.uuid4().hex[:8]}"
        account = create_tenant(subdomain, "admin", PASSWORD, ["api-access"], bcrypt_rounds=4)
        engine = create_engine(sqlalchemy_url(os.environ["SBC_DATABASE_URL"]), poolclass=pool.NullPool)
        insert_records(engine, account.id, records, with_summary=True)
        engine.dispose()
        with serving_api(work) as port:
            config = {"url": f"http://{subdomain}.localhost:{port}", "username": "admin", "password": PASSWORD,
                      "runs": runs}
            times = run_browser("e2e/measure-call-records.js", config)["times"]
    report(f"call records usable with {records:,} records ({runs} page loads)", times, GOAL_USABLE_MS)


def live_view_latency(events: int) -> None:
    """Bus event → on the Live view: ``events`` callers queued, then ``events`` queue.metrics."""
    import requests

    from app.accounts.service import create_tenant

    with private_stack.private_stack(RUN) as work:
        subdomain = f"bench-{uuid.uuid4().hex[:8]}"
        account = create_tenant(subdomain, "admin", PASSWORD, ["api-access", "queue-mgmt"], bcrypt_rounds=4)
        with serving_api(work) as port:
            base = f"http://127.0.0.1:{port}"
            host = {"Host": f"{subdomain}.localhost"}
            token = requests.post(f"{base}/auth/login", json={"username": "admin", "password": PASSWORD},
                                  headers=host, timeout=10).json()["token"]
            queue = requests.post(f"{base}/api/queues", json={"name": "Sales"}, timeout=10,
                                  headers={**host, "Authorization": f"Bearer {token}"}).json()
            config = {"url": f"http://{subdomain}.localhost:{port}", "username": "admin", "password": PASSWORD,
                      "runs": events, "account": str(account.id), "queueId": queue["id"],
                      "python": sys.executable, "root": ROOT}
            times = run_browser("e2e/measure-live.js", config)
    report(f"live view, a caller queued → on screen (board re-read; {events} events)", times["enqueue"],
           GOAL_LIVE_MS)
    report(f"live view, queue.metrics → on screen (pushed as is; {events} events)", times["metrics"],
           GOAL_LIVE_MS)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--live-events", type=int, default=50, help="0 skips the live-view latency")
    args = parser.parse_args()
    if not (STATIC_DIR / "index.html").is_file():
        print("the console is not built: run bash scripts/install", file=sys.stderr)
        return 1
    first_page_js()
    if args.records:
        call_records_usable(args.records, args.runs)
    if args.live_events:
        live_view_latency(args.live_events)
    return 0


def first_page_js() -> None:
    from app.api.app import create_app

    client = create_app({"TESTING": True}, bind_host="127.0.0.1").test_client()  # never listens
    page = client.get("/console/", headers={"Host": "acme.localhost"})
    html = page.get_data(as_text=True)
    first = re.findall(r'<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="/console/assets/([\w.-]+\.js)"', html)
    later = sorted({p.name for p in ASSETS_DIR.glob("*.js")} - set(first))
    print(f"first page (/console/, the sign-in or the Phone numbers screen): {len(first)} script(s)")
    total_gz = total_raw = 0
    for name in first:
        answer = client.get(f"/console/assets/{name}", headers={"Accept-Encoding": "gzip"})
        assert answer.status_code == 200 and answer.headers.get("Content-Encoding") == "gzip", name
        raw = (ASSETS_DIR / name).stat().st_size
        total_gz += len(answer.data)
        total_raw += raw
        print(f"  {name}: {len(answer.data) / 1024:.1f} KB gzipped ({raw / 1024:.1f} KB)")
    print(f"JS shipped for the first page: {total_gz / 1024:.1f} KB gzipped ({total_raw / 1024:.1f} KB raw); "
          f"goal <= {GOAL_KB} KB gzipped: {'met' if total_gz <= GOAL_KB * 1024 else 'NOT met'}")
    for name in later:
        answer = client.get(f"/console/assets/{name}", headers={"Accept-Encoding": "gzip"})
        print(f"  later, when its screen opens: {name}: {len(answer.data) / 1024:.1f} KB gzipped")
    print(f"HTML: {len(html)} bytes")


if __name__ == "__main__":
    raise SystemExit(main())
