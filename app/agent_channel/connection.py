"""One agent's open socket: who it is, what it is offered or talking to, and a writer greenlet.

Why a writer greenlet and an outbox: the bus relay, the takeover listener and the command loop
all produce messages; only the writer touches the socket (wsproto's state is not safe to share
between greenlets, and a plain ``send`` may write part of a frame). The relay never waits on a
slow client: a full outbox closes the socket (4009) instead of growing memory.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

import gevent
import gevent.queue
from wsproto.events import CloseConnection, TextMessage

from app import limits
from app.agent_channel import protocol

log = logging.getLogger(__name__)

_CLOSE = object()  # outbox marker: send the close frame (code, reason follow in a tuple)


@dataclass
class AgentConnection:
    ws: Any                     # simple_websocket.Server
    account_id: str
    agent_id: str
    user_id: str
    session_kind: str           # admin | agent (the token's session)
    subdomain: str
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    offer_id: Optional[str] = None  # the call offered to the agent now
    preview_id: Optional[str] = None  # the campaign contact offered to the agent now (preview mode)
    call_id: Optional[str] = None   # the call the agent is connected to now
    connected_at: float = 0.0       # monotonic time of this socket's last ``call`` connected
    closed: bool = False
    close_code: Optional[int] = None
    # the login token's verified claims: re-checked against revocation with every identity check
    token_claims: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._outbox: gevent.queue.Queue = gevent.queue.Queue(limits.AGENT_CHANNEL_OUTBOX_SIZE)
        self._writer = gevent.spawn(self._write)

    # -- sending -----------------------------------------------------------------------------
    def send(self, body: dict[str, Any]) -> None:
        """Queue a message; never blocks. A client that stopped reading is closed."""
        if self.closed:
            return
        try:
            self._outbox.put_nowait(protocol.encode(body))
        except gevent.queue.Full:
            log.warning("agent channel %s: client not reading, closing", self.session_id)
            self.close(protocol.CLOSE_SLOW_CLIENT, "client not reading", drain=False)

    def close(self, code: int = protocol.CLOSE_NORMAL, reason: str = "", *, drain: bool = True) -> None:
        """Close after what is queued has been sent (``drain``), with ``code``."""
        if self.closed:
            return
        self.closed = True
        self.close_code = code
        if not drain:
            while not self._outbox.empty():
                self._outbox.get_nowait()
        try:
            self._outbox.put_nowait((_CLOSE, code, reason))
        except gevent.queue.Full:  # cannot happen after the drain above; be safe anyway
            self._writer.kill(block=False)
            self._close_socket(code, reason)

    def takeover(self) -> None:
        """A newer connection of the same agent won: tell this one and close it (4001)."""
        if not self.closed:
            self.send(protocol.message("takeover", sessionId=self.session_id))
            self.close(protocol.CLOSE_TAKEOVER, "taken over by a newer connection")

    def wait_closed(self, timeout: float = 5.0) -> None:
        self._writer.join(timeout)

    # -- the writer ------------------------------------------------------------------------------
    def _write(self) -> None:
        while True:
            item = self._outbox.get()
            if isinstance(item, tuple) and item and item[0] is _CLOSE:
                self._close_socket(item[1], item[2])
                return
            try:
                self.ws.sock.sendall(self.ws.ws.send(TextMessage(data=item)))
            except Exception as exc:  # the peer went away (OSError) or wsproto is closed
                log.info("agent channel %s: send failed (%s); closing", self.session_id, exc)
                self.closed = True
                self._mark_disconnected()
                return

    def _close_socket(self, code: int, reason: str) -> None:
        try:
            if self.ws.connected:
                self.ws.sock.sendall(self.ws.ws.send(CloseConnection(code=code, reason=reason)))
        except Exception as exc:  # already gone: nothing to tell it
            log.debug("agent channel %s: close frame not sent (%s)", self.session_id, exc)
        self._mark_disconnected()

    def _mark_disconnected(self) -> None:
        self.ws.connected = False
        self.ws.event.set()  # wake the command loop's receive()
