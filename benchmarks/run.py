"""Run benchmarks and print their figures: ``python benchmarks/run.py [name ...]``.

Every ``benchmarks/*_bench.py`` is run in its own process (so gevent patching and module state
never leak between benches); with arguments, only the named ones (``esl_parse`` or
``esl_parse_bench.py``). Figures, not pass/fail: exit status is non-zero only if a bench crashed.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    if argv:
        names = [a if a.endswith(".py") else f"{a.removesuffix('_bench')}_bench.py" for a in argv]
        benches = [HERE / n for n in names]
    else:
        benches = sorted(HERE.glob("*_bench.py"))
    failed = 0
    for bench in benches:
        print(f"== {bench.name}", flush=True)
        proc = subprocess.run([sys.executable, str(bench)], cwd=HERE.parent)
        if proc.returncode != 0:
            failed += 1
            print(f"!! {bench.name} exited with {proc.returncode}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
