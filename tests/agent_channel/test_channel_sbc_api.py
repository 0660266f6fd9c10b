"""The agent channel under the real ``sbc api`` process (gevent's pywsgi, monkey-patched entry
point), two of them: what the in-test server proves holds for the shipped command too."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tests.agent_channel.client import ChannelClient
from tests.plugins.eventually import eventually

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_api() -> tuple[subprocess.Popen, int]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from app.cli import main; main()", "api", "--host", "127.0.0.1",
         "--port", str(port), "--no-access-log"],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    def listening() -> bool:
        assert proc.poll() is None, proc.stderr.read().decode()  # (exits: its stderr at the deadline)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return False
        return True

    eventually(listening, timeout=30, interval=0.1, what="sbc api listening")
    return proc, port


@pytest.fixture
def two_apis(database, amqp_vhost, publisher) -> Iterator[list[int]]:
    started = [_start_api(), _start_api()]
    yield [port for _proc, port in started]
    for proc, _port in started:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_given_two_sbc_api_processes_when_the_agent_logs_in_on_both_then_the_older_is_taken_over_and_the_newer_gets_its_state(two_apis, seed, api):
    tenant = seed.tenant()
    seed.user(tenant, "cy", agent=True)
    token = api.mint(tenant, "cy", session="agent")
    first = ChannelClient(two_apis[0], tenant.host)
    assert first.auth(token)["state"] == "open"
    first.expect("state")
    assert first.command("setState", state="available")["ok"] is True
    assert first.expect("state", lambda m: m["state"] == "available")
    second = ChannelClient(two_apis[1], tenant.host)
    second.auth(token)
    first.expect("takeover")
    assert first.closed_with() == 4001
    assert second.command("setState", state="not_ready", reason="break")["ok"] is True
    assert second.expect("state", lambda m: m["state"] == "not_ready")["reason"] == "break"
    second.close()


def test_given_an_open_socket_when_sbc_api_gets_sigterm_then_the_socket_is_closed_1001_and_the_process_exits(
        database, amqp_vhost, seed, api):
    tenant = seed.tenant()
    seed.user(tenant, "di", agent=True)
    proc, port = _start_api()
    try:
        client = ChannelClient(port, tenant.host)
        client.auth(api.mint(tenant, "di", session="agent"))
        proc.terminate()
        assert client.closed_with() == 1001
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
