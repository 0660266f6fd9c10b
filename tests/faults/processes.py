"""Product processes for fault tests: real ``sbc`` commands as subprocesses, so a test can
SIGKILL one exactly as an operator (or the OOM killer) would."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.engine import platform_session
from app.models import ClusterConfig
from tests.plugins.eventually import eventually

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_block(count: int) -> int:
    """The first of ``count`` consecutive free loopback TCP ports, for a listener whose
    neighbours are derived from it (``sbc controller --processes N``: child i's ops port is
    base + 1 + i). ``free_port() + 1`` alone is often some client socket's ephemeral port
    under a busy suite, and a child that cannot bind its listener is never ready."""
    while True:
        base = free_port()
        if base + count > 65535:
            continue
        held = []
        try:
            for port in range(base, base + count):
                probe = socket.socket()
                held.append(probe)
                probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for probe in held:
                probe.close()


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, step: float = 0.05) -> float:
    """Seconds it took ``predicate`` to hold (fails the test after ``timeout``): the shared
    eventually(), timed, for the tests that report how long recovery took."""
    started = time.monotonic()
    eventually(predicate, timeout=timeout, what=what, interval=step)
    return time.monotonic() - started


@contextmanager
def cluster_config(values: dict[str, Any]) -> Iterator[None]:
    """Store these cluster_config keys for the test (the processes read them at start)."""
    with platform_session() as s:
        for key, value in values.items():
            s.execute(pg_insert(ClusterConfig).values(key=key, value=value)
                      .on_conflict_do_update(index_elements=[ClusterConfig.key], set_={"value": value}))
    try:
        yield
    finally:
        with platform_session() as s:
            s.execute(delete(ClusterConfig).where(ClusterConfig.key.in_(list(values))))


def start_sbc(*args: str, log_path: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    with open(log_path, "ab") as log_file:
        return subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=ROOT,
                                env={**os.environ, **(env or {})}, stdout=log_file,
                                stderr=subprocess.STDOUT)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
