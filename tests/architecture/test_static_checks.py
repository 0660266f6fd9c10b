"""ruff and mypy are part of the test command: a finding of either fails the run.

Both run with the configuration in pyproject.toml ([tool.ruff], [tool.mypy]: which packages
mypy covers and why the rest are not yet covered). The tools are the ones pinned in the
``test`` extra, found next to the running interpreter (``python -m ruff``), never by a path of
one machine. mypy's cache lives under pytest's temporary directory unless MYPY_CACHE_DIR says
otherwise, so a run never writes into the checkout.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUFF_PATHS = ["app", "esl", "tests", "benchmarks", "migrations"]
MYPY_TIMEOUT_SECONDS = 300  # a cold run of the covered packages takes ~15 s on this machine


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def _report(tool: str, proc: subprocess.CompletedProcess[str]) -> str:
    return f"{tool} found problems (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}"


def test_ruff_finds_nothing_in_the_code_tests_benchmarks_and_migrations() -> None:
    proc = _run(["ruff", "check", "--no-cache", *RUFF_PATHS], timeout=120)
    assert proc.returncode == 0, _report("ruff", proc)


def test_mypy_finds_nothing_in_the_covered_packages(tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = os.environ.get("MYPY_CACHE_DIR") or str(tmp_path_factory.mktemp("mypy_cache"))
    proc = _run(["mypy", "--cache-dir", cache, "--no-error-summary"], timeout=MYPY_TIMEOUT_SECONDS)
    assert proc.returncode == 0, _report("mypy", proc)
