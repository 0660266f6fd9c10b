"""Schemathesis run figures: operations x examples and wall time of tests/fuzz, as the test
command runs it (same seed, same bound). Figures, not assertions.

Run: .venv/bin/python benchmarks/fuzz_bench.py [--examples N]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=None, help="cases per operation (default: the test's)")
    args = parser.parse_args()
    with tempfile.NamedTemporaryFile("r", suffix=".tsv") as stats:
        env = dict(os.environ, SBC_FUZZ_STATS=stats.name)
        if args.examples is not None:
            env["SBC_FUZZ_EXAMPLES"] = str(args.examples)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "pytest", "tests/fuzz", "-q", "-p", "no:cacheprovider"],
                                cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        rows = [line.split("\t") for line in stats.read().splitlines() if line]
    sent = [int(count) for _label, count in rows]
    print(result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr[-500:])
    print(f"operations: {len(rows)}   cases sent: {sum(sent)}   per operation: "
          f"min {min(sent, default=0)} max {max(sent, default=0)}")
    print(f"wall time (pytest process, incl. database setup): {wall:.1f} s")


if __name__ == "__main__":
    main()
