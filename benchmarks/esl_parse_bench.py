"""ESL events parsed and dispatched per second (goal: 20,000/s).

1. parser only: FrameParser.feed + Frame.event() over real captured events (≈4–6 KiB each, 60–230
   headers), fed in 64 KiB chunks like a socket read;
2. end to end: a TCP peer blasts the same events at an EslConnection (reader greenlet → bounded
   queue → dispatcher greenlet → handler); measured until the handler has seen every event.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from app.gevent_setup import patch  # noqa: E402

patch()

import gevent  # noqa: E402
import gevent.event  # noqa: E402
from gevent import socket  # noqa: E402
from gevent.server import StreamServer  # noqa: E402

from esl.connection import EslConnection  # noqa: E402
from esl.protocol import FrameParser, iter_frames  # noqa: E402

RUNS = 5
CAPTURE = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "esl_captures",
                       "outbound_answer_playback_hangup", "received.raw")


def event_frames() -> bytes:
    raw = open(CAPTURE, "rb").read()
    out = []
    # re-encode each event frame exactly as received (outer header + body)
    for frame in iter_frames(raw):
        if frame.content_type == "text/event-plain":
            out.append(f"Content-Length: {len(frame.body)}\nContent-Type: text/event-plain\n\n".encode() + frame.body)
    return b"".join(out), len(out)


def bench_parser(blob: bytes, per_blob: int, repeat: int, full: bool) -> float:
    """full=False: what a dispatcher reads (name, Unique-ID, Application-UUID);
    full=True: every header decoded (as a handler that walks ev.headers would)."""
    stream = blob * repeat
    n = per_blob * repeat
    parser = FrameParser()
    start = time.perf_counter()
    count = 0
    for i in range(0, len(stream), 65536):
        for frame in parser.feed(stream[i:i + 65536]):
            ev = frame.event()
            if full:
                if len(ev.headers) and ev.name:
                    count += 1
            elif ev.name and ev.unique_id and ev.get("Application-UUID", "-"):
                count += 1
    elapsed = time.perf_counter() - start
    assert count == n, (count, n)
    return n / elapsed


def bench_end_to_end(blob: bytes, per_blob: int, repeat: int) -> tuple[float, int]:
    n = per_blob * repeat
    payload = blob * repeat

    def blaster(sock, addr):
        sock.sendall(payload)
        gevent.sleep(30)

    server = StreamServer(("127.0.0.1", 0), blaster)
    server.start()
    seen = [0]
    done = gevent.event.Event()

    def handler(ev):
        if ev.unique_id:
            seen[0] += 1
        if seen[0] == n:
            done.set()

    sock = socket.create_connection(server.address[:2])
    conn = EslConnection(sock, queue_size=n + 10, name="bench")
    conn.on("*", handler)
    start = time.perf_counter()
    conn.start()
    done.wait(120)
    elapsed = time.perf_counter() - start
    dropped = conn.dropped_events
    conn.close()
    server.stop(timeout=0)
    return seen[0] / elapsed, dropped


def main() -> None:
    blob, per_blob = event_frames()
    avg = len(blob) / per_blob
    repeat = max(1, 20000 // per_blob)
    print(f"{per_blob * repeat} captured channel events per run, avg {avg:,.0f} bytes / ~150 headers each;"
          f" {RUNS} runs, median and best (the CPU is shared: the median is the honest figure)")

    def show(label: str, rates: list[float], extra: str = "") -> None:
        print(f"{label:60s} median {statistics.median(rates):9,.0f}/s  best {max(rates):9,.0f}/s {extra}")

    show("parser, dispatch fields only (Event-Name, Unique-ID, App-UUID)",
         [bench_parser(blob, per_blob, repeat, full=False) for _ in range(RUNS)])
    show("parser, every header decoded", [bench_parser(blob, per_blob, repeat, full=True) for _ in range(RUNS)])
    runs = [bench_end_to_end(blob, per_blob, repeat) for _ in range(RUNS)]
    show("tcp -> reader -> queue -> handler (reads Event-Name, Unique-ID)", [r for r, _ in runs],
         f"(dropped {sum(d for _, d in runs)})")


if __name__ == "__main__":
    main()
