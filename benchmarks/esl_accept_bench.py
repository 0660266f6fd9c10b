"""Outbound-socket accept latency: our gevent StreamServer vs greenswitch 0.0.19's accept loop.

greenswitch's OutboundESLServer.listen() polls a non-blocking accept() and sleeps 100 ms when
nothing is pending, so a call that arrives while it sleeps waits for the rest of that sleep.
Both servers run the same application: send ``connect`` as soon as the socket is handed over.
We measure, from the simulated FreeSWITCH side, the time from TCP connect() to receiving
``connect`` — the first moment the controller is talking to the call. Calls arrive at random
moments while the server is idle (the normal case for a controller between calls).
"""
from __future__ import annotations

import contextlib
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from app.gevent_setup import patch  # noqa: E402

patch()

import gevent  # noqa: E402
from gevent import socket  # noqa: E402

from esl.outbound import OutboundServer  # noqa: E402

try:
    from greenswitch.esl import OutboundESLServer
except ImportError:
    sys.exit("esl_accept_bench needs greenswitch (the bench extra): pip install -e '.[bench]'")

CALLS = 40


def measure(address: tuple[str, int]) -> list[float]:
    rng = random.Random(7)
    samples = []
    for _ in range(CALLS):
        gevent.sleep(rng.uniform(0.12, 0.3))  # idle gap: the server is waiting for a call
        start = time.perf_counter()
        sock = socket.create_connection(address)
        buf = b""
        while b"\n\n" not in buf:
            data = sock.recv(4096)
            if not data:
                break
            buf += data
        samples.append((time.perf_counter() - start) * 1000)
        sock.close()
    return samples


def report(label: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(f"{label:28s} n={len(samples)}  mean {statistics.mean(samples):7.2f} ms  "
          f"p50 {statistics.median(samples):7.2f} ms  p95 {p95:7.2f} ms  max {samples[-1]:7.2f} ms")


def ours() -> list[float]:
    def app(conn):
        with contextlib.suppress(Exception):  # only the accept latency is measured
            conn.connect(timeout=1)

    server = OutboundServer(app, "127.0.0.1", 0)
    server.start()
    try:
        return measure(server.address)
    finally:
        server.stop(timeout=0)


class _GreenswitchApp:
    def __init__(self, session):
        self.session = session

    def run(self):
        """Accepting is all this bench measures: the call itself does nothing."""


def greenswitch() -> list[float]:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server = OutboundESLServer("127.0.0.1", port, application=_GreenswitchApp, max_connections=1000)
    g = gevent.spawn(server.listen)
    gevent.sleep(0.2)
    try:
        return measure(("127.0.0.1", port))
    finally:
        server.stop()
        g.kill(block=False)


def main() -> None:
    report("esl.OutboundServer (gevent StreamServer)", ours())
    report("greenswitch OutboundESLServer", greenswitch())


if __name__ == "__main__":
    main()
