"""A real ``sbc run`` (API + controller + workers as processes, real PostgreSQL, Redis and
RabbitMQ): SIGKILL its controller child and it comes back while the API keeps answering."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert

from app.db.engine import platform_session
from app.models import ClusterConfig
from tests.plugins.eventually import eventually

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("controller.listen", "freeswitch.nodes", "health.controller_port", "health.workers_port")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def _api_answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/openapi.json", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _child_pid(parent: int, command: str) -> int | None:
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(parent)],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, _, args = line.strip().partition(" ")
        if args.split()[-1:] == [command] or f" {command} " in f" {args} ":
            if "app.cli" in args:
                return int(pid)
    return None


@pytest.fixture
def sbc_run(database, amqp_vhost, tmp_path):
    api_port, controller_port = _free_port(), _free_port()
    with platform_session() as s:
        for key, value in (("controller.listen", {"host": "127.0.0.1", "port": controller_port}),
                           # a switch that is not there: the controller keeps retrying it
                           ("freeswitch.nodes", [{"host": "127.0.0.1", "port": _free_port(),
                                                  "password": "x"}]),
                           # ops listeners on free ports (the defaults 8085/8086 may be taken)
                           ("health.controller_port", _free_port()),
                           ("health.workers_port", _free_port())):
            s.execute(pg_insert(ClusterConfig).values(key=key, value=value)
                      .on_conflict_do_update(index_elements=[ClusterConfig.key], set_={"value": value}))
    log_path = tmp_path / "run.log"
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "run", "--api-port", str(api_port)],
                                cwd=ROOT, env=dict(os.environ), stdout=log_file, stderr=subprocess.STDOUT)
    try:
        eventually(lambda: _api_answers(api_port) and _listening(controller_port), timeout=60,
                   what="sbc run up")
        yield proc, api_port, controller_port, log_path
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with platform_session() as s:
            s.execute(delete(ClusterConfig).where(ClusterConfig.key.in_(KEYS)))


def test_given_sbc_run_when_its_controller_is_killed_then_it_restarts_and_the_api_keeps_answering(sbc_run):
    proc, api_port, controller_port, log_path = sbc_run
    victim = _child_pid(proc.pid, "controller")
    api_pid = _child_pid(proc.pid, "api")
    assert victim and api_pid
    os.kill(victim, signal.SIGKILL)
    eventually(lambda: not _listening(controller_port), timeout=5, what="controller down")
    api_ok_while_down = _api_answers(api_port)
    down_at = time.monotonic()
    eventually(lambda: _listening(controller_port), timeout=30, what="controller back")
    recovery = time.monotonic() - down_at
    print(f"\ncontroller SIGKILL -> serving again in {recovery:.2f}s")
    assert api_ok_while_down, "the API stopped answering while the controller was down"
    assert proc.poll() is None, "sbc run exited"
    assert _child_pid(proc.pid, "controller") not in (None, victim)
    assert _child_pid(proc.pid, "api") == api_pid, "the API was restarted too"
    assert _api_answers(api_port)
    log = log_path.read_text()
    assert "controller exited with signal 9" in log and "restarted controller" in log
