"""Verb-list validation throughput: how many 10-verb webhook replies parse per second.

Run: .venv/bin/python benchmarks/verbs_bench.py [seconds]
Prints figures; asserts nothing (figures, not pass/fail).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a plain script too

from app.verbs import VerbListRejected, parse_verb_list

REPLY_10 = [
    {"verb": "tag", "data": {"campaign": "spring", "vip": True}},
    {"verb": "say", "text": "Welcome to Acme. Calls may be recorded.", "voice": "slt"},
    {"verb": "play", "url": "https://media.example.com/jingle.mp3"},
    {"verb": "pause", "length": 0.5},
    {"verb": "gather", "numDigits": 1, "timeout": 6,
     "say": {"text": "Press 1 for sales, 2 for support"}, "actionHook": "https://hooks.example.com/menu"},
    {"verb": "say", "text": "We did not get that."},
    {"verb": "gather", "input": ["dtmf", "speech"], "play": {"url": "https://media.example.com/menu.wav"},
     "actionHook": "https://hooks.example.com/menu2"},
    {"verb": "say", "text": "Transferring you now", "loop": 1},
    {"verb": "tag", "data": {"transferred": True}},
    {"verb": "dial", "callerId": "+15551230000", "timeout": 30,
     "target": [{"type": "user", "name": "alice"}, {"type": "phone", "name": "+14155550100"},
                {"type": "sip", "name": "sip:bob@pbx.example.com"}]},
]
BAD_10 = REPLY_10[:9] + [{"verb": "teleport", "to": "mars"}]


def measure(label: str, raw: bytes, seconds: float, expect_ok: bool) -> None:
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(100):
            data = json.loads(raw)
            try:
                parse_verb_list(data)
                ok = True
            except VerbListRejected:
                ok = False
            assert ok is expect_ok
        count += 100
    elapsed = time.perf_counter() - start
    print(f"{label:<40} {count / elapsed:>10,.0f} lists/s  {elapsed / count * 1e6:>8.1f} us/list "
          f"({len(raw)} bytes JSON incl. json.loads)")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    parse_verb_list(REPLY_10)  # build schemas once
    measure("valid 10-verb reply", json.dumps(REPLY_10).encode(), seconds, True)
    measure("10-verb reply, last verb unknown", json.dumps(BAD_10).encode(), seconds, False)
    from app.verbs.jsonschema import verb_list_json_schema

    start = time.perf_counter()
    for _ in range(20):
        verb_list_json_schema()
    print(f"{'JSON Schema export':<40} {(time.perf_counter() - start) / 20 * 1e3:>10.2f} ms/export")


if __name__ == "__main__":
    main()
