"""A test client of the agent channel (docs/agents.md "The agent channel"): websocket-client
(blocking, gevent-patched) speaking the protocol's JSON messages."""
from __future__ import annotations

import contextlib
import json
import time
from typing import Any, Callable, Optional

import websocket

CHANNEL = "/api/agents/me/channel"


class ChannelClient:
    """One agent socket; ``expect`` skips messages until one matches."""

    def __init__(self, port: int, host: str, *, timeout: float = 10.0) -> None:
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{CHANNEL}", host=host, timeout=timeout)
        self.seen: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []  # received, not yet expected
        self._ids = 0

    def send(self, body: Any) -> None:
        self.ws.send(body if isinstance(body, str) else json.dumps(body))

    def auth(self, token: str) -> dict[str, Any]:
        self.send({"type": "auth", "token": token})
        return self.expect("connection")

    def command(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Send a command; returns its ack."""
        self._ids += 1
        command_id = str(self._ids)
        self.send({"type": type_, "id": command_id, **fields})
        return self.expect("ack", lambda m: m.get("id") == command_id)

    def recv(self) -> Optional[dict[str, Any]]:
        """The next message, or None when the server closed the socket."""
        opcode, data = self.ws.recv_data(control_frame=False)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            self.close_code = int.from_bytes(data[:2], "big") if len(data) >= 2 else None
            return None
        body = json.loads(data)
        self.seen.append(body)
        return body

    def expect(self, type_: str, match: Callable[[dict], bool] = lambda _m: True,
               timeout: float = 15.0) -> dict[str, Any]:
        """The first message of ``type_`` matching ``match``, received before or now; the
        messages passed over stay for later ``expect`` calls (order kept)."""
        for n, body in enumerate(self.pending):
            if body.get("type") == type_ and match(body):
                return self.pending.pop(n)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.recv()
            if body is None:
                raise AssertionError(f"closed ({getattr(self, 'close_code', None)}) waiting for {type_}; seen {self.seen}")
            if body.get("type") == type_ and match(body):
                return body
            self.pending.append(body)
        raise AssertionError(f"no {type_} within {timeout}s; seen {self.seen}")

    def closed_with(self, timeout: float = 10.0) -> Optional[int]:
        """Read until the server closes; its close code."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.recv() is None:
                return self.close_code
        raise AssertionError("the server did not close the socket")

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already closed by the server: nothing left to close
            self.ws.close()
