"""Webhook round-trip overhead against a local server: figures, not pass/fail.

Measures WebhookClient.fetch_instructions end to end — guard + (stub) resolution, body
serialised once, HMAC-SHA256 signed, sent, reply read under the size cap and JSON-parsed —
against a gevent.pywsgi server on 127.0.0.1 replying with a small verb list, over plain HTTP
(loopback dev mode) and over HTTPS with a throw-away CA (keep-alive pool reused, as in
production). Also the signing cost alone. Run: .venv/bin/python benchmarks/webhook_bench.py [N]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # repo root

from app.gevent_setup import patch  # noqa: E402

patch()

import json  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import urllib3  # noqa: E402

from app.webhooks import StaticResolver, WebhookClient, sign  # noqa: E402
from tests.plugins.webhook_server import HookServer, LocalCA, Reply  # noqa: E402

BODY = {
    "callId": "0f6c3c1e-6a53-4c47-9d44-3f0b5c7d9a11",
    "traceId": "8d1f4a9e-2b7c-4e55-8a0d-6c2e9f1b3d47",
    "accountSid": "3b1e2d4c-5f6a-4b7c-8d9e-0a1b2c3d4e5f",
    "applicationSid": "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
    "from": "15551234567", "to": "15557654321", "direction": "inbound", "callStatus": "ringing",
}
VERBS = [{"verb": "say", "text": "Welcome"}, {"verb": "gather", "input": ["digits"],
                                               "actionHook": "/menu", "numDigits": 1}]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def run(label: str, client: WebhookClient, url: str, n: int) -> None:
    timed(label, n, lambda: client.fetch_instructions(url, "POST", BODY, secret="whsec_bench"))


def timed(label: str, n: int, call) -> None:
    for _ in range(20):   # warm-up: pool, TLS session, code paths
        call()
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    print(f"{label:<34} n={n:<6} p50={percentile(samples, 50):7.3f} ms  "
          f"p99={percentile(samples, 99):7.3f} ms  mean={statistics.fmean(samples):7.3f} ms")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    resolver = StaticResolver({"hooks.test": "127.0.0.1"})

    http = HookServer().start()
    http.reply(Reply.json(VERBS))
    # Baseline: bare urllib3 keep-alive POST of pre-built bytes (no guard, signing, parsing).
    raw = urllib3.HTTPConnectionPool("127.0.0.1", http.port, maxsize=1)
    payload = json.dumps(BODY).encode()
    timed("baseline: bare urllib3 POST", n,
          lambda: raw.urlopen("POST", "/hook", body=payload,
                              headers={"Content-Type": "application/json"}).data)
    run("http  keep-alive (loopback dev)", WebhookClient(resolver=resolver, allow_loopback=True),
        http.url(host="hooks.test"), n)

    with tempfile.TemporaryDirectory() as tmp:
        ca = LocalCA(Path(tmp))
        issued = ca.issue(["hooks.test"])
        https = HookServer(ssl_args={"ssl_context": issued.server_context([])}).start()
        https.reply(Reply.json(VERBS))
        client = WebhookClient(resolver=resolver, allow_loopback=True, ca_bundle=ca.ca_file)
        run("https keep-alive (verified cert)", client, https.url(host="hooks.test"), n)
        https.stop()
    http.stop()

    body = b'{"callId":"0f6c3c1e","traceId":"8d1f4a9e","from":"15551234567"}' * 4
    started = time.perf_counter()
    for _ in range(n * 10):
        sign(body, "whsec_bench")
    per = (time.perf_counter() - started) / (n * 10) * 1e6
    print(f"{'sign() alone (~256 B body)':<34} n={n * 10:<6} mean={per:7.3f} us")


if __name__ == "__main__":
    main()
