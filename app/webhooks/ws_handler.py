"""ws:// wss:// call handlers: one bidirectional WebSocket per call, jambonz-style JSON messages.

When ``call_hook_url`` is a ws(s) URL the call is driven over a WebSocket instead of HTTP
requests. Subprotocol ``audio.<vendor>.org`` (vendor from runtime config, default
``saas-sbc``). Every message is a JSON text frame with a ``type``.

We send (SBC → app):

* ``session:new``       ``{type, msgid, call_sid, data}`` — ``data`` is the same body as the
  first HTTP webhook; the app MUST answer with ``ack``.
* ``verb:hook``         ``{type, msgid, call_sid, hook, data}`` — actionHook/redirect with the
  call tags and digits/speech; the app MUST answer with ``ack``.
* ``call:status``       ``{type, msgid, call_sid, data}`` — notification, no ack.
* ``session:reconnect`` ``{type, msgid, call_sid, data}`` — after an unexpected drop and a
  successful reconnect (``data`` = the session:new body); then every message still waiting for
  its ack is re-sent with its original ``msgid``.

We accept (app → SBC):

* ``ack``     ``{type:"ack", msgid, data?}`` — ``data`` (a verb list) is returned as-is to the
  caller of :meth:`WsCallHandler.start` / :meth:`WsCallHandler.verb_hook`, which validates it
  like an HTTP reply; no ``data`` → None.
* ``command`` ``{type:"command", command, data?}`` with ``command`` one of
  ``redirect`` (``data`` = verb list replacing the rest of the current list) or ``hangup``;
  queued on :attr:`WsCallHandler.commands` for the call session to act on.
  Unknown types/commands are logged and ignored (never executed).

Connection rules are the HTTP client's: SSRF guard with one resolution per connection and a
socket opened to the checked address, TLS verified against the original host name (SNI),
no proxies, no redirects on the upgrade. A dropped connection is re-established with bounded
backoff (``WS_RECONNECT_DELAYS_SECONDS``); when those are used up the handler is dead, waiters
get ``WebhookFailed(reason="closed")`` and ``None`` is put on ``commands``.
"""
from __future__ import annotations

import base64
import contextlib
import json
import logging
import socket
import ssl
import uuid
from typing import Any, Callable, Mapping, Sequence

import gevent
import gevent.event
import gevent.queue
import websocket

from app.errors import UnsafeUrl
from app.limits import (
    WEBHOOK_ATTEMPTS,
    WEBHOOK_RETRY_DELAYS_SECONDS,
    WEBHOOK_TIMEOUT_SECONDS,
    WEBHOOK_USER_AGENT,
    WS_ACK_TIMEOUT_SECONDS,
    WS_DEFAULT_VENDOR,
    WS_RECONNECT_DELAYS_SECONDS,
)
from app.webhooks import url_guard
from app.webhooks.errors import Reason, WebhookFailed
from app.webhooks.resolver import Resolver

log = logging.getLogger("app.webhooks.ws")

# app → SBC commands we act on; anything else is ignored.
COMMANDS = frozenset({"redirect", "hangup"})


def subprotocol_for(vendor: str) -> str:
    return f"audio.{vendor}.org"


class _Dropped(Exception):
    """The socket closed under the reader: reconnect."""


class WsCallHandler:
    """One call's WebSocket. Create, :meth:`start`, then :meth:`verb_hook` /
    :meth:`send_status` as the call goes, :meth:`close` at hangup."""

    def __init__(self, url: str, *, call_sid: str, vendor: str = WS_DEFAULT_VENDOR,
                 resolver: Resolver | None = None, allow_loopback: bool | None = None,
                 ca_bundle: str | None = None, basic_auth: tuple[str, str] | None = None,
                 connect_timeout: float = WEBHOOK_TIMEOUT_SECONDS,
                 ack_timeout: float = WS_ACK_TIMEOUT_SECONDS,
                 connect_attempts: int = WEBHOOK_ATTEMPTS,
                 connect_delays: Sequence[float] = WEBHOOK_RETRY_DELAYS_SECONDS,
                 reconnect_delays: Sequence[float] = WS_RECONNECT_DELAYS_SECONDS,
                 sleep: Callable[[float], None] = gevent.sleep) -> None:
        self.url = url
        self.call_sid = call_sid
        self.subprotocol = subprotocol_for(vendor)
        self._resolver = resolver
        self._allow_loopback = allow_loopback
        self._ca_bundle = ca_bundle
        self._basic_auth = basic_auth
        self._connect_timeout = connect_timeout
        self._ack_timeout = ack_timeout
        self._connect_attempts = max(1, connect_attempts)
        self._connect_delays = tuple(connect_delays) or (0.0,)
        self._reconnect_delays = tuple(reconnect_delays)
        self._sleep = sleep
        self._host = ""
        self._ws: websocket.WebSocket | None = None
        self._reader: gevent.Greenlet | None = None
        self._session_body: Mapping[str, Any] = {}
        self._waiting: dict[str, tuple[dict, gevent.event.AsyncResult]] = {}
        self._backlog: list[dict] = []       # notifications sent while reconnecting
        self._connected = gevent.event.Event()
        self._closing = False
        self.dead = False
        self.reconnects = 0
        self.commands: gevent.queue.Queue = gevent.queue.Queue()

    # -- public API --------------------------------------------------------------------------
    def start(self, body: Mapping[str, Any]) -> Any | None:
        """Connect, send ``session:new`` and return the ack's ``data`` (None if absent)."""
        self._session_body = dict(body)
        self._connect_with_retries()
        self._reader = gevent.spawn(self._read_loop)
        return self._request({"type": "session:new", "data": self._session_body})

    def verb_hook(self, hook: str, body: Mapping[str, Any]) -> Any | None:
        """actionHook/redirect over the socket; returns the ack's ``data`` (None if absent)."""
        return self._request({"type": "verb:hook", "hook": hook, "data": dict(body)})

    def send_status(self, body: Mapping[str, Any]) -> None:
        """call:status notification; buffered while reconnecting, dropped once dead."""
        message = self._envelope({"type": "call:status", "data": dict(body)})
        if self.dead or self._closing:
            return
        if not self._connected.is_set() or not self._send(message):
            self._backlog.append(message)

    def close(self) -> None:
        """End of call: close normally (no reconnect) and release every waiter."""
        self._closing = True
        # Stop the reader first: ws.close() reads the peer's close frame itself, and two
        # greenlets must never read one socket.
        if self._reader is not None and self._reader is not gevent.getcurrent():
            self._reader.kill(block=True, timeout=1)
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):  # closing a broken socket is best effort
                ws.close(timeout=1)
        self._fail_waiters(Reason.CLOSED, "handler closed")

    # -- connection ----------------------------------------------------------------------------
    def _open(self) -> websocket.WebSocket:
        dest = url_guard.guard(self.url, kind=url_guard.WS, resolver=self._resolver,
                               allow_loopback=self._allow_loopback)
        self._host = dest.host
        family = socket.AF_INET6 if dest.ip.version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(self._connect_timeout)
        try:
            sock.connect((str(dest.ip), dest.port))   # the checked address, no second lookup
            if dest.secure:
                context = ssl.create_default_context(cafile=self._ca_bundle)
                context.minimum_version = ssl.TLSVersion.TLSv1_2
                sock = context.wrap_socket(sock, server_hostname=dest.host)
            headers = [f"User-Agent: {WEBHOOK_USER_AGENT}"]
            if self._basic_auth:
                token = base64.b64encode(":".join(self._basic_auth).encode("utf-8")).decode()
                headers.append(f"Authorization: Basic {token}")
            ws = websocket.WebSocket(enable_multithread=True)
            ws.connect(self.url, socket=sock, host=dest.host_header, header=headers,
                       subprotocols=[self.subprotocol], suppress_origin=True,
                       redirect_limit=0, timeout=self._connect_timeout)
        except BaseException:
            sock.close()
            raise
        if ws.getstatus() != 101 or (ws.getsubprotocol() or "").lower() != self.subprotocol:
            ws.close()
            raise websocket.WebSocketException("server did not accept subprotocol "
                                               f"{self.subprotocol}")
        ws.settimeout(None)   # a call can be quiet for minutes; drops are seen by recv
        return ws

    def _try_open(self) -> tuple[websocket.WebSocket | None, str]:
        # One budget for connect + TLS + upgrade, like an HTTP attempt: a server that drips the
        # handshake cannot hold the call past it.
        deadline = gevent.Timeout(self._connect_timeout)
        deadline.start()
        try:
            return self._open(), ""
        except gevent.Timeout as fired:
            if fired is not deadline:
                raise
            return None, Reason.TIMEOUT
        except UnsafeUrl as exc:
            if (exc.details or {}).get("reason") == "unresolvable":
                return None, Reason.DNS
            raise WebhookFailed(Reason.UNSAFE, 0, host=self._host or None,
                                detail=exc.message) from exc
        except ssl.SSLError:
            return None, Reason.TLS
        except (socket.timeout, websocket.WebSocketTimeoutException):
            return None, Reason.TIMEOUT
        except websocket.WebSocketException:
            return None, Reason.PROTOCOL
        except OSError:
            return None, Reason.CONNECTION
        finally:
            deadline.cancel()

    def _connect_with_retries(self) -> None:
        reason = Reason.CONNECTION
        for attempt in range(1, self._connect_attempts + 1):
            if attempt > 1:
                self._sleep(self._connect_delays[min(attempt - 2, len(self._connect_delays) - 1)])
            ws, reason = self._try_open()
            log.info("ws handler connect attempt=%d host=%s outcome=%s", attempt, self._host,
                     reason or "ok")
            if ws is not None:
                self._ws = ws
                self._connected.set()
                return
        self.dead = True
        raise WebhookFailed(reason, self._connect_attempts, host=self._host or None)

    def _reconnect(self) -> bool:
        self._connected.clear()
        for attempt, delay in enumerate(self._reconnect_delays, start=1):
            self._sleep(delay)
            if self._closing:
                return False
            try:
                ws, reason = self._try_open()
            except WebhookFailed:   # the URL became unsafe (DNS changed): stop for good
                ws, reason = None, Reason.UNSAFE
            log.info("ws handler reconnect attempt=%d host=%s outcome=%s", attempt, self._host,
                     reason or "ok")
            if reason == Reason.UNSAFE:
                return False
            if ws is not None:
                self._ws = ws
                self.reconnects += 1
                self._connected.set()
                self._send(self._envelope({"type": "session:reconnect",
                                           "data": self._session_body}))
                for message, _ in list(self._waiting.values()):
                    self._send(message)
                backlog, self._backlog = self._backlog, []
                for message in backlog:
                    self._send(message)
                return True
        return False

    # -- messages ------------------------------------------------------------------------------
    def _envelope(self, message: dict) -> dict:
        return {"type": message["type"], "msgid": uuid.uuid4().hex, "call_sid": self.call_sid,
                **{k: v for k, v in message.items() if k != "type"}}

    def _send(self, message: dict) -> bool:
        ws = self._ws
        if ws is None:
            return False
        try:
            ws.send(json.dumps(message, separators=(",", ":"), ensure_ascii=False))
            return True
        except (websocket.WebSocketException, OSError):
            return False   # the reader sees the drop and reconnects; waiters are re-sent then

    def _request(self, message: dict) -> Any | None:
        if self.dead or self._closing:
            raise WebhookFailed(Reason.CLOSED, 0, host=self._host or None)
        envelope = self._envelope(message)
        result = gevent.event.AsyncResult()
        self._waiting[envelope["msgid"]] = (envelope, result)
        try:
            if self._connected.is_set():
                self._send(envelope)
            try:
                return result.get(timeout=self._ack_timeout)
            except gevent.Timeout:
                raise WebhookFailed(Reason.TIMEOUT, 1, host=self._host,
                                    detail=f"no ack for {message['type']}") from None
        finally:
            self._waiting.pop(envelope["msgid"], None)

    def _fail_waiters(self, reason: str, detail: str) -> None:
        for _, result in list(self._waiting.values()):
            if not result.ready():
                result.set_exception(WebhookFailed(reason, 1, host=self._host or None,
                                                   detail=detail))

    def _handle(self, raw: str) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            log.warning("ws handler host=%s sent a non-JSON frame; ignored", self._host)
            return
        if not isinstance(message, dict):
            log.warning("ws handler host=%s sent a non-object message; ignored", self._host)
            return
        kind = message.get("type")
        if kind == "ack":
            waiting = self._waiting.get(str(message.get("msgid")))
            if waiting is None:
                log.info("ws handler host=%s ack for an unknown msgid; ignored", self._host)
                return
            # Absent data → None ("no instructions"); anything else, an explicit empty list
            # included, goes to the caller's all-or-nothing validation exactly as over HTTP.
            waiting[1].set(message.get("data"))
        elif kind == "command" and message.get("command") in COMMANDS:
            self.commands.put({"command": message["command"], "data": message.get("data")})
        else:
            log.warning("ws handler host=%s unsupported message type=%r command=%r; ignored",
                        self._host, kind, message.get("command"))

    def _read_loop(self) -> None:
        while not self._closing:
            ws = self._ws
            try:
                if ws is None:
                    raise _Dropped()
                opcode, data = ws.recv_data()
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    raise _Dropped()
                if opcode == websocket.ABNF.OPCODE_TEXT:
                    self._handle(data.decode("utf-8") if isinstance(data, bytes) else data)
            except (_Dropped, websocket.WebSocketException, OSError, UnicodeDecodeError):
                if self._closing:
                    return
                log.info("ws handler host=%s connection dropped; reconnecting", self._host)
                self._ws = None
                if ws is not None:
                    with contextlib.suppress(Exception):  # already broken: best effort
                        ws.shutdown()
                if not self._reconnect():
                    self.dead = True
                    self._fail_waiters(Reason.CLOSED, "reconnect attempts used up")
                    self.commands.put(None)
                    return
