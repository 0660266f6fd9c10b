"""``sbc api`` serves the app over real HTTP and stops cleanly on SIGTERM."""
from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugins.eventually import eventually

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(database):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from app.cli import main; main()", "api",
         "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    def listening() -> bool:
        assert proc.poll() is None, proc.stderr.read().decode()  # (exits: its stderr at the deadline)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return False
        return True

    eventually(listening, timeout=30, interval=0.1, what="sbc api listening")
    yield proc, port
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _request(port: int, method: str, path: str, host: str, body: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Host": host}
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, json.loads(payload) if payload else None


def test_given_sbc_api_running_when_logging_in_over_http_then_it_answers_and_stops_on_sigterm(server, seed):
    proc, port = server
    acme = seed.tenant()
    status, doc = _request(port, "GET", "/api/openapi.json", acme.host)
    assert status == 200 and "/auth/login" in doc["paths"]
    status, body = _request(port, "POST", "/auth/login", acme.host,
                            {"username": "admin", "password": acme.admin.password})
    assert status == 200 and body["token_type"] == "Bearer"
    status, body = _request(port, "GET", "/nope", acme.host)
    assert status == 404 and body["code"] == "not_found"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0
