"""The supervisor's aggregated /readyz (app/ops/children.py) reads a child that answers badly
(a body cut short, JSON that is not an object) as unreachable and answers 503 in JSON: an
orchestrator polling a starting ``sbc controller --processes N`` never gets a bare 500."""
from __future__ import annotations

import os
import socket
import threading
from typing import Iterator

import pytest

from app.ops.children import UNREACHABLE, ChildrenReadiness, ChildView
from app.ops.http import OpsEndpoints, start_ops_server
from tests.faults.processes import free_port
from tests.ops.ops_http import get_json

CUT_SHORT = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"status\""
NOT_AN_OBJECT = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n[\"ready\"]"


@pytest.fixture
def child_answering() -> Iterator:
    """A fake child's ops listener that answers every request with the given raw bytes."""
    listeners = []

    def start(raw: bytes) -> str:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        listeners.append(server)

        def serve() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(4096)
                    conn.sendall(raw)
        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{server.getsockname()[1]}"
    yield start
    for server in listeners:
        server.close()


@pytest.mark.parametrize("raw, error", [(CUT_SHORT, "IncompleteRead"), (NOT_AN_OBJECT, "not an object")],
                         ids=["body_cut_short", "json_not_an_object"])
def test_given_a_child_answering_badly_when_the_supervisors_readyz_is_asked_then_503_naming_it_unreachable(
        child_answering, raw, error):
    url = child_answering(raw)
    readiness = ChildrenReadiness("controller", lambda: [ChildView("controller-0", 0, url, os.getpid())])
    server = start_ops_server(OpsEndpoints(readiness), "127.0.0.1", free_port())
    try:
        status, body = get_json(server.address[1], "/readyz")
    finally:
        server.stop()
    assert status == 503
    assert body["ready"] == 0 and body["processes"] == 1
    [child] = body["children"]
    assert child["status"] == UNREACHABLE and error in child["error"], child
