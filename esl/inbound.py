"""Inbound ESL: the controller's long-lived connection to FreeSWITCH's event socket (port 8021).

Used for node-wide events (gateway state, BACKGROUND_JOB, channel lifecycle for legs we do not
own) and for ``api``/``bgapi``. On top of :class:`esl.connection.EslConnection` this adds:
auth, the event subscription, filters, ``bgapi`` tracked to its BACKGROUND_JOB by a Job-UUID
we choose (sent as a header, so the result future exists before FreeSWITCH can answer), and a
supervisor that reconnects with exponential backoff, restores subscriptions and filters, then
hands the parsed ``show channels as json`` rows to a reconciliation callback so no call is
forgotten across a FreeSWITCH restart or network blip.
"""
from __future__ import annotations

import contextlib
import json
import logging
import random
import socket as _socket
import uuid as _uuid
from collections.abc import Callable, Iterable
from typing import Optional

import gevent
import gevent.event

from esl.connection import DEFAULT_COMMAND_TIMEOUT, DEFAULT_QUEUE_SIZE, EslConnection, Handler
from esl.errors import AuthenticationFailed, CommandFailed, CommandTimeout, ConnectionLost, NotConnected
from esl.protocol import Event, Frame, build_event_command

log = logging.getLogger(__name__)

ReconcileCallback = Callable[[list[dict]], None]


def parse_channels_json(body: str) -> list[dict]:
    """Rows of ``show channels as json``: ``{"row_count":N,"rows":[...]}`` (no trailing newline)
    or, when empty, ``{"row_count": 0}\\n`` (no rows key)."""
    text = body.strip()
    if not text:
        return []
    if text.startswith("-ERR"):
        raise CommandFailed("show channels as json", text)
    data = json.loads(text)
    rows = data.get("rows") or []
    return [row for row in rows if isinstance(row, dict)]


class BackgroundJob:
    """A ``bgapi`` in progress: ``result(timeout)`` returns the BACKGROUND_JOB body."""

    def __init__(self, job_uuid: str, command: str) -> None:
        self.job_uuid = job_uuid
        self.command = command
        self._result: gevent.event.AsyncResult = gevent.event.AsyncResult()
        self.event: Optional[Event] = None

    def result(self, timeout: Optional[float] = None) -> str:
        try:
            return self._result.get(timeout=timeout)
        except gevent.Timeout:
            raise CommandTimeout(f"bgapi {self.command.split(' ', 1)[0]}: no BACKGROUND_JOB within {timeout}s") from None

    @property
    def done(self) -> bool:
        return self._result.ready()

    @property
    def ok(self) -> bool:
        return self._result.successful() and self._result.value.startswith("+OK")


class _InboundSocket(EslConnection):
    def __init__(self, sock, owner: "InboundConnection", **kw) -> None:
        super().__init__(sock, **kw)
        self._owner = owner
        self.auth_request = gevent.event.AsyncResult()

    def _on_auth_request(self, frame: Frame) -> None:
        if not self.auth_request.ready():
            self.auth_request.set(True)

    def _on_rude_rejection(self, frame: Frame) -> None:
        if not self.auth_request.ready():
            self.auth_request.set_exception(AuthenticationFailed(frame.body_text.strip() or "rude rejection"))

    def _route_event(self, event: Event) -> None:
        if event.name == "BACKGROUND_JOB":
            self._owner._on_background_job(event)

    def _on_connection_lost(self, reason: BaseException) -> None:
        if not self.auth_request.ready():
            self.auth_request.set_exception(ConnectionLost(str(reason)))
        self._owner._on_socket_lost(self, reason)


class InboundConnection:
    """Resilient inbound ESL connection. ``connect()`` once; it stays connected until ``close()``."""

    def __init__(
        self,
        host: str,
        port: int,
        password: str,
        *,
        events: Iterable[str] = ("BACKGROUND_JOB",),
        on_reconcile: Optional[ReconcileCallback] = None,
        reconnect: bool = True,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        connect_timeout: float = 5.0,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        queue_size: int = DEFAULT_QUEUE_SIZE,
    ) -> None:
        self.host = host
        self.port = port
        self._password = password
        self.events = list(events)
        if "BACKGROUND_JOB" not in self.events:
            self.events.append("BACKGROUND_JOB")  # bgapi results depend on it
        self.on_reconcile = on_reconcile
        self.reconnect = reconnect
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self.queue_size = queue_size
        self._filters: list[tuple[str, str]] = []
        self._handlers: list[tuple[str, Handler]] = []
        self._jobs: dict[str, BackgroundJob] = {}
        self._sock: Optional[_InboundSocket] = None
        self._stopped = False
        self._supervisor: Optional[gevent.Greenlet] = None
        self._lost = gevent.event.Event()
        self.connected_event = gevent.event.Event()
        self.reconnects = 0
        self.last_reconcile_rows: Optional[list[dict]] = None

    # -- lifecycle -----------------------------------------------------------------------------
    def connect(self) -> None:
        """Open, authenticate and subscribe; raise if the first attempt fails."""
        self._stopped = False
        self._open()
        if self.reconnect and self._supervisor is None:
            self._supervisor = gevent.spawn(self._supervise)

    @property
    def connected(self) -> bool:
        return self._sock is not None and self._sock.connected

    def close(self) -> None:
        """Send ``exit`` (best effort) and stop reconnecting."""
        self._stopped = True
        sock = self._sock
        if sock is not None and sock.connected:
            with contextlib.suppress(Exception):  # best effort: we are leaving either way
                sock.send_command("exit", timeout=1.0)
            sock.close()
        if self._supervisor is not None:
            self._supervisor.kill(block=False)
            self._supervisor = None

    def drop(self) -> None:
        """Close the socket but keep reconnecting (the supervisor takes over): for a switch
        that stopped answering while its TCP connection stayed up."""
        sock = self._sock
        if sock is not None:
            sock.close()

    # -- handlers and subscriptions ------------------------------------------------------------
    def on(self, event_name: str, handler: Handler) -> None:
        """Handler per event name (CUSTOM: by subclass); kept across reconnects."""
        self._handlers.append((event_name, handler))
        if self._sock is not None:
            self._sock.on(event_name, handler)

    def subscribe(self, *names: str) -> None:
        for name in names:
            if name not in self.events:
                self.events.append(name)
        self._require().send_command(build_event_command(self.events), timeout=self.command_timeout)

    def filter(self, header: str, value: str) -> str:
        """``filter <header> <value>``; restored after a reconnect. Returns the reply text."""
        reply = self._require().send_command(f"filter {header} {value}", timeout=self.command_timeout)
        if reply.reply_text.startswith("-ERR"):
            raise CommandFailed(f"filter {header}", reply.reply_text)
        self._filters.append((header, value))
        return reply.reply_text

    # -- commands ------------------------------------------------------------------------------
    def api(self, command: str, timeout: Optional[float] = None) -> str:
        """Blocking ``api``; returns the body (``+OK ...``, ``-ERR ...`` or data)."""
        reply = self._require().send_command(f"api {command}", timeout=timeout or self.command_timeout)
        return reply.body_text

    def bgapi(self, command: str, timeout: Optional[float] = None) -> BackgroundJob:
        """Start ``bgapi``; the returned job resolves on its BACKGROUND_JOB event."""
        job_uuid = str(_uuid.uuid4())
        job = BackgroundJob(job_uuid, command)
        self._jobs[job_uuid] = job
        try:
            reply = self._require().send_command(
                f"bgapi {command}", [("Job-UUID", job_uuid)], timeout=timeout or self.command_timeout)
        except BaseException:
            self._jobs.pop(job_uuid, None)
            raise
        if reply.reply_text.startswith("-ERR"):
            self._jobs.pop(job_uuid, None)
            raise CommandFailed(f"bgapi {command}", reply.reply_text)
        echoed = reply.headers.get("Job-UUID")
        if echoed and echoed != job_uuid:  # a switch that ignored our header
            self._jobs[echoed] = self._jobs.pop(job_uuid)
            job.job_uuid = echoed
        return job

    def sendevent(self, name: str, headers: list[tuple[str, str]], timeout: Optional[float] = None) -> str:
        """``sendevent <name>`` with ``headers``; with a ``Unique-ID`` header FreeSWITCH queues
        the event on that session instead of firing it (mod_event_socket), e.g. an
        ``eavesdrop-command`` for a running eavesdrop. Returns the reply text."""
        reply = self._require().send_command(f"sendevent {name}", headers,
                                             timeout=timeout or self.command_timeout)
        return reply.reply_text

    def show_channels(self, timeout: Optional[float] = None) -> list[dict]:
        return parse_channels_json(self.api("show channels as json", timeout=timeout))

    def wait_for(self, what, timeout: Optional[float] = None) -> Event:
        return self._require().wait_for(what, timeout=timeout)

    @property
    def dropped_events(self) -> int:
        return self._sock.dropped_events if self._sock is not None else 0

    # -- internals -----------------------------------------------------------------------------
    def _require(self) -> _InboundSocket:
        sock = self._sock
        if sock is None or not sock.connected:
            raise NotConnected(f"inbound {self.host}:{self.port} is not connected")
        return sock

    def _open(self) -> None:
        raw = _socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        raw.settimeout(None)
        raw.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        sock = _InboundSocket(raw, self, command_timeout=self.command_timeout,
                              queue_size=self.queue_size, name=f"inbound {self.host}:{self.port}")
        for name, handler in self._handlers:
            sock.on(name, handler)
        sock.start()
        try:
            try:
                sock.auth_request.get(timeout=self.connect_timeout)
            except gevent.Timeout:
                raise CommandTimeout("no auth/request from FreeSWITCH") from None
            reply = sock.send_command(f"auth {self._password}", timeout=self.connect_timeout)
            if reply.reply_text != "+OK accepted":
                raise AuthenticationFailed(reply.reply_text or "auth refused")
            sock.send_command(build_event_command(self.events), timeout=self.command_timeout)
            for header, value in self._filters:
                sock.send_command(f"filter {header} {value}", timeout=self.command_timeout)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._lost.clear()
        self.connected_event.set()
        log.info("inbound ESL connected to %s:%s", self.host, self.port)

    def _on_background_job(self, event: Event) -> None:
        job = self._jobs.pop(event.get("Job-UUID", ""), None)
        if job is not None:
            job.event = event
            job._result.set(event.body)

    def _on_socket_lost(self, sock: _InboundSocket, reason: BaseException) -> None:
        if sock is not self._sock:
            return
        self.connected_event.clear()
        jobs, self._jobs = self._jobs, {}
        for job in jobs.values():
            if not job.done:
                job._result.set_exception(ConnectionLost(f"connection lost before BACKGROUND_JOB: {reason}"))
        self._lost.set()

    def _supervise(self) -> None:
        while not self._stopped:
            self._lost.wait()
            if self._stopped:
                return
            log.warning("inbound ESL %s:%s lost; reconnecting", self.host, self.port)
            delay = self.backoff_initial
            while not self._stopped:
                gevent.sleep(delay * (0.8 + 0.4 * random.random()))
                try:
                    self._open()
                except Exception as exc:
                    log.info("inbound reconnect failed: %s", exc)
                    delay = min(delay * 2, self.backoff_max)
                    continue
                self.reconnects += 1
                self._reconcile()
                break

    def _reconcile(self) -> None:
        try:
            rows = self.show_channels()
        except Exception:
            log.exception("reconcile: show channels failed")
            return
        self.last_reconcile_rows = rows
        if self.on_reconcile is not None:
            try:
                self.on_reconcile(rows)
            except Exception:
                log.exception("reconcile callback failed")
