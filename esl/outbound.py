"""Outbound ESL: FreeSWITCH's ``socket host:port async full`` dials us once per call.

The server is a gevent ``StreamServer`` (accept is event-driven; greenswitch's
``OutboundESLServer`` polls a non-blocking accept and sleeps 100 ms when idle, which adds up to
100 ms to call setup). Each accepted socket becomes an :class:`OutboundConnection` handed to the
application callable in its own greenlet.

Execute semantics (async mode, verified against the captures): ``sendmsg`` is answered ``+OK`` at
once; the ``Event-UUID`` we send comes back as ``Application-UUID`` on CHANNEL_EXECUTE and
CHANNEL_EXECUTE_COMPLETE, which is how completions are matched (so two executes in flight, or
the same app twice, cannot be confused; greenswitch matches on the app name). A CHANNEL_HANGUP
for our channel fails every waiting execute at once with :class:`ChannelHungUp`.
"""
from __future__ import annotations

import contextlib
import logging
import socket as _socket
import uuid as _uuid
from collections.abc import Callable
from typing import Optional

import gevent
import gevent.event
import gevent.pool
from gevent.server import StreamServer

from esl.connection import DEFAULT_COMMAND_TIMEOUT, DEFAULT_QUEUE_SIZE, EslConnection
from esl.errors import ChannelHungUp, CommandFailed, CommandTimeout, ConnectionLost, EslError
from esl.protocol import Event, Frame, build_event_command

log = logging.getLogger(__name__)

# Set by dialplan/public.xml next to ``sched_hangup``: the call is refused by the switch unless
# the controller cancels that task when it takes the call (``begin_session``).
SETUP_GUARD_VARIABLE = "sbc_setup_guard"
# How long a refused ``uuid_answer`` waits for the CHANNEL_HANGUP that explains it.
ANSWER_REFUSED_GRACE_SECONDS = 1.0
# ``myevents`` subscribes to a fixed list of the channel's events (mod_event_socket.c), each
# carrying all its variables (~10 KB on the real switch). No session or verb reads these, so
# FreeSWITCH is asked not to serialise them and we do not parse them: about half of a simple
# call's events. Only names on that list: FreeSWITCH reads commands one byte per syscall.
UNUSED_CHANNEL_EVENTS = ("CHANNEL_EXECUTE", "CHANNEL_STATE", "CHANNEL_PROGRESS",
                         "CHANNEL_PROGRESS_MEDIA", "CHANNEL_PARK", "CHANNEL_UNPARK")
# Not on the ``myevents`` list, but the session counts and publishes the caller's holds
# (call.hold / call.resumed): subscribed with ``event plain``; ``myevents`` still limits them to
# this channel.
SESSION_EXTRA_EVENTS = ("CHANNEL_HOLD", "CHANNEL_UNHOLD")


class _ExecWait:
    __slots__ = ("app", "result", "raise_on_hangup")

    def __init__(self, app: str, raise_on_hangup: bool) -> None:
        self.app = app
        self.result: gevent.event.AsyncResult = gevent.event.AsyncResult()
        self.raise_on_hangup = raise_on_hangup


class OutboundConnection(EslConnection):
    """One call's socket. Call :meth:`connect` first; everything else needs the channel data."""

    def __init__(
        self,
        sock: _socket.socket,
        address: tuple = ("", 0),
        *,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        queue_size: int = DEFAULT_QUEUE_SIZE,
    ) -> None:
        super().__init__(sock, command_timeout=command_timeout, queue_size=queue_size,
                         name=f"outbound {address[0]}:{address[1]}" if address else "outbound")
        self.address = address
        self._channel_data: Optional[Event] = None
        self._executes: dict[str, _ExecWait] = {}
        self._hangup_event: Optional[Event] = None
        self._hangup_complete: gevent.event.AsyncResult = gevent.event.AsyncResult()
        self.lingering = False
        self.linger_notice: Optional[Event] = None

    # -- properties ----------------------------------------------------------------------------
    @property
    def channel_data(self) -> Event:
        if self._channel_data is None:
            raise EslError("connect() has not completed")
        return self._channel_data

    @property
    def uuid(self) -> str:
        data = self.channel_data
        return data.get("Unique-ID") or data.variable("uuid") or ""

    @property
    def hung_up(self) -> bool:
        return self._hangup_event is not None

    @property
    def hangup_event(self) -> Optional[Event]:
        return self._hangup_event

    @property
    def hangup_complete_event(self) -> Optional[Event]:
        return self._hangup_complete.value if self._hangup_complete.successful() else None

    # -- session commands ----------------------------------------------------------------------
    def connect(self, timeout: Optional[float] = None) -> Event:
        """Send ``connect``; return the channel data (one header block, no Content-Length)."""
        reply = self.send_command("connect", timeout=timeout)
        self._channel_data = reply.headers  # parsed lazily: a session reads a dozen headers
        self.name = f"outbound {self.uuid}"
        return self._channel_data

    def myevents(self, timeout: Optional[float] = None) -> Frame:
        """Subscribe to this channel's events (excludes PLAYBACK_*/RECORD_*: use subscribe)."""
        return self._ok(self.send_command("myevents", timeout=timeout), "myevents")

    def linger(self, seconds: Optional[int] = None, timeout: Optional[float] = None) -> Frame:
        """Keep the socket after hangup so the final events arrive; without seconds, until exit."""
        cmd = "linger" if seconds is None else f"linger {int(seconds)}"
        return self._ok(self.send_command(cmd, timeout=timeout), cmd)

    def begin_session(self, timeout: Optional[float] = None) -> Optional[str]:
        """``myevents`` + ``event plain`` (SESSION_EXTRA_EVENTS) + ``nixevent``
        (UNUSED_CHANNEL_EVENTS) + ``linger`` (+ ``api sched_del <uuid>`` when the dialplan armed
        the setup guard, dialplan/public.xml) pipelined in one write: one round trip instead of
        five, because every millisecond here is ringing the caller hears. Returns the guard's
        reply (None when there was no guard) so the caller can log a guard that could not be
        cancelled."""
        if timeout is None:
            timeout = self.command_timeout
        guarded = self.channel_data.variable(SETUP_GUARD_VARIABLE) == "true"
        nix = "nixevent " + " ".join(UNUSED_CHANNEL_EVENTS)
        extra = build_event_command(SESSION_EXTRA_EVENTS)
        commands = [("myevents", (), ""), (extra, (), ""), (nix, (), ""), ("linger", (), "")]
        if guarded:
            commands.append((f"api sched_del {self.uuid}", (), ""))
        replies = [self._await(p, timeout) for p in self._send_pipelined(commands)]
        for reply, (command, _, _) in zip(replies, commands[:4]):
            self._ok(reply, command.split(" ", 1)[0])
        return replies[4].body_text.strip() if guarded else None

    def nolinger(self, timeout: Optional[float] = None) -> Frame:
        return self._ok(self.send_command("nolinger", timeout=timeout), "nolinger")

    def subscribe(self, *names: str, timeout: Optional[float] = None) -> Frame:
        """``event plain <names>``, added to myevents; CUSTOM subclasses (``a::b``) are placed
        after ``CUSTOM`` automatically."""
        if not names:
            raise ValueError("subscribe() needs at least one event name")
        cmd = build_event_command(names)
        return self._ok(self.send_command(cmd, timeout=timeout), cmd)

    def filter(self, header: str, value: str, timeout: Optional[float] = None) -> Frame:
        cmd = f"filter {header} {value}"
        return self._ok(self.send_command(cmd, timeout=timeout), cmd)

    def api(self, command: str, timeout: Optional[float] = None) -> str:
        """``api <command>`` on this socket; returns the body text (``+OK ...`` / ``-ERR ...``)."""
        return self.send_command(f"api {command}", timeout=timeout).body_text

    def answer(self, timeout: Optional[float] = None) -> None:
        """Answer the call now: ``api uuid_answer`` instead of a queued ``execute answer``.

        Why: before media, FreeSWITCH's socket application parks the channel, and the park loop
        reads the channel's application queue once per 20 ms tick (``switch_ivr_park``:
        ``switch_yield(20000)``, then one queued event). A queued ``answer`` therefore reached
        the caller 0-20 ms late, on every call. ``uuid_answer`` runs ``switch_channel_answer``
        in the socket's own thread at once (mod_commands), with the same effect as the
        ``answer`` application (200 OK, CHANNEL_ANSWER). Raises :class:`ChannelHungUp` when the
        caller is gone, :class:`CommandFailed` when the switch refuses for another reason."""
        if self._hangup_event is not None:
            raise ChannelHungUp(self._hangup_event)
        reply = self.api(f"uuid_answer {self.uuid}", timeout=timeout)
        if reply.startswith("+OK"):
            return
        # A channel hung up a moment ago refuses too; its CHANNEL_HANGUP may follow the reply.
        self._hangup_complete.wait(ANSWER_REFUSED_GRACE_SECONDS)  # returns, never raises
        if self._hangup_event is not None:
            raise ChannelHungUp(self._hangup_event)
        raise CommandFailed("uuid_answer", reply.strip())

    def execute_async(self, app: str, arg: str = "", *, event_lock: bool = False,
                      timeout: Optional[float] = None) -> str:
        """Queue an application; return its Application-UUID without waiting for completion."""
        app_uuid = str(_uuid.uuid4())
        self._register_and_send(app, arg, app_uuid, event_lock, True, timeout)
        return app_uuid

    def execute(self, app: str, arg: str = "", *, timeout: Optional[float] = None,
                event_lock: bool = False, raise_on_hangup: bool = True) -> Event:
        """Run ``app`` and return its CHANNEL_EXECUTE_COMPLETE event.

        Raises :class:`ChannelHungUp` as soon as CHANNEL_HANGUP arrives first (unless
        ``raise_on_hangup`` is False: then wait for the completion, which FreeSWITCH still sends,
        e.g. playback's ``PLAYBACK ERROR`` or a failed bridge's disposition variables).
        ``timeout`` bounds the whole wait (None: until completion, hang-up or disconnect).
        """
        if raise_on_hangup and self._hangup_event is not None:
            raise ChannelHungUp(self._hangup_event)
        app_uuid = str(_uuid.uuid4())
        self._register_and_send(app, arg, app_uuid, event_lock, raise_on_hangup, None)
        return self.wait_execute(app_uuid, timeout=timeout)

    def wait_execute(self, app_uuid: str, timeout: Optional[float] = None) -> Event:
        """Wait for the completion of an app started with :meth:`execute_async`."""
        wait = self._executes.get(app_uuid)
        if wait is None:
            raise EslError(f"no execute pending with Application-UUID {app_uuid}")
        try:
            return wait.result.get(timeout=timeout)
        except gevent.Timeout:
            raise CommandTimeout(f"{self.name}: {wait.app} did not complete within {timeout}s") from None
        finally:
            self._executes.pop(app_uuid, None)

    def poll_execute(self, app_uuid: str, timeout: float) -> Optional[Event]:
        """Wait up to ``timeout`` seconds for the completion of an app started with
        :meth:`execute_async`: its CHANNEL_EXECUTE_COMPLETE, or None while it still runs (it
        can be polled again, unlike :meth:`wait_execute` after a timeout). A long-running app
        (hold music) is watched this way while the caller of it does other work in between."""
        wait = self._executes.get(app_uuid)
        if wait is None:
            raise EslError(f"no execute pending with Application-UUID {app_uuid}")
        try:
            event = wait.result.get(timeout=timeout)
        except gevent.Timeout:
            return None
        except BaseException:
            self._executes.pop(app_uuid, None)
            raise
        self._executes.pop(app_uuid, None)
        return event

    def set_var(self, name: str, value: str, timeout: Optional[float] = None) -> None:
        """Set a channel variable at once (``uuid_setvar``: no app queue round trip)."""
        if "\n" in value or " " in name:
            raise ValueError("channel variable names have no spaces and values are single-line")
        reply = self.api(f"uuid_setvar {self.uuid} {name} {value}", timeout=timeout)
        if not reply.startswith("+OK"):
            raise CommandFailed(f"uuid_setvar {name}", reply)

    def refuse(self, cause: str, timeout: Optional[float] = None) -> None:
        """``connect`` and ``sendmsg`` hangup pipelined: the call ends unanswered in one round
        trip, and the channel data is not parsed (FreeSWITCH acts on no command before
        ``connect``)."""
        if timeout is None:
            timeout = self.command_timeout
        pending = self._send_pipelined([
            ("connect", (), ""),
            ("sendmsg", [("call-command", "hangup"), ("hangup-cause", cause)], "")])
        for reply in pending:
            self._await(reply, timeout)

    def hangup(self, cause: str = "NORMAL_CLEARING", timeout: Optional[float] = None) -> Frame:
        """``sendmsg`` call-command hangup (FreeSWITCH answers +OK even on a dead channel)."""
        return self.send_command(
            "sendmsg", [("call-command", "hangup"), ("hangup-cause", cause)], timeout=timeout
        )

    def wait_hangup_complete(self, timeout: Optional[float] = None) -> Event:
        """Block until CHANNEL_HANGUP_COMPLETE (the call record's source of truth)."""
        try:
            return self._hangup_complete.get(timeout=timeout)
        except gevent.Timeout:
            raise CommandTimeout(f"{self.name}: no CHANNEL_HANGUP_COMPLETE within {timeout}s") from None

    def exit(self, timeout: Optional[float] = None) -> None:
        """``exit`` (after the linger notice): FreeSWITCH says +OK bye and closes the socket."""
        with contextlib.suppress(ConnectionLost):  # FreeSWITCH may close first (linger over)
            self.send_command("exit", timeout=timeout)
        self.wait_closed(timeout=1.0)
        self.close()

    # -- internals -----------------------------------------------------------------------------
    @staticmethod
    def _ok(reply: Frame, cmd: str) -> Frame:
        if reply.reply_text.startswith("-ERR"):
            raise CommandFailed(cmd, reply.reply_text)
        return reply

    def _register_and_send(self, app: str, arg: str, app_uuid: str, event_lock: bool,
                           raise_on_hangup: bool, timeout: Optional[float]) -> None:
        headers = [("call-command", "execute"), ("execute-app-name", app)]
        body = ""
        if arg:
            if "\n" in arg or "\r" in arg:
                body = arg
            else:
                headers.append(("execute-app-arg", arg))
        headers.append(("Event-UUID", app_uuid))
        if event_lock:
            headers.append(("Event-Lock", "true"))
        # Register first: the completion of a short app may arrive right behind the +OK.
        self._executes[app_uuid] = _ExecWait(app, raise_on_hangup)
        try:
            reply = self.send_command("sendmsg", headers, body, timeout=timeout)
        except BaseException:
            self._executes.pop(app_uuid, None)
            raise
        if reply.reply_text.startswith("-ERR"):
            self._executes.pop(app_uuid, None)
            raise CommandFailed(f"execute {app}", reply.reply_text)

    def _route_event(self, event: Event) -> None:
        name = event.name
        if name == "CHANNEL_EXECUTE_COMPLETE":
            wait = self._executes.get(event.get("Application-UUID", ""))
            if wait is not None and not wait.result.ready():
                wait.result.set(event)
        elif name == "CHANNEL_HANGUP":
            if self._is_mine(event) and self._hangup_event is None:
                self._hangup_event = event
                for wait in self._executes.values():
                    if wait.raise_on_hangup and not wait.result.ready():
                        wait.result.set_exception(ChannelHungUp(event))
        elif name == "CHANNEL_HANGUP_COMPLETE":
            if self._is_mine(event) and not self._hangup_complete.ready():
                if self._hangup_event is None:
                    self._hangup_event = event
                self._hangup_complete.set(event)

    def _is_mine(self, event: Event) -> bool:
        uid = event.get("Unique-ID")
        return uid is None or self._channel_data is None or uid == self.uuid

    def _on_disconnect_notice(self, frame) -> None:
        disposition = frame.headers.get("Content-Disposition")
        if disposition == "linger":
            self.lingering = True
            self.linger_notice = frame.headers
        # "disconnect": FreeSWITCH closes the socket next; the reader sees EOF.

    def _on_connection_lost(self, reason: BaseException) -> None:
        for wait in self._executes.values():
            if not wait.result.ready():
                if self._hangup_event is not None:
                    wait.result.set_exception(ChannelHungUp(self._hangup_event, "connection closed after hangup"))
                else:
                    wait.result.set_exception(ConnectionLost(str(reason)))
        if not self._hangup_complete.ready():
            self._hangup_complete.set_exception(ConnectionLost(str(reason)))


Application = Callable[[OutboundConnection], None]

LISTEN_BACKLOG = 4096  # capped by net.core.somaxconn
# A call socket can be silent for an hour (a long bridge): TCP keepalive is what notices a
# switch that vanished without a FIN (network split), so the session ends and frees its slot.
KEEPALIVE_IDLE_SECONDS = 30
KEEPALIVE_INTERVAL_SECONDS = 10
KEEPALIVE_PROBES = 3


def _enable_keepalive(sock: _socket.socket) -> None:
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_KEEPALIVE, 1)
    sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_KEEPIDLE, KEEPALIVE_IDLE_SECONDS)
    sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_KEEPINTVL, KEEPALIVE_INTERVAL_SECONDS)
    sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_KEEPCNT, KEEPALIVE_PROBES)


class OutboundServer:
    """Accepts FreeSWITCH's outbound sockets and runs ``application(conn)`` per call.

    The application owns the call: it must ``connect()`` first. When it returns (or raises),
    the socket is closed. ``max_connections`` bounds concurrent sockets (the pool makes the
    server stop accepting while full, pushing back on FreeSWITCH instead of overcommitting).
    """

    def __init__(
        self,
        application: Application,
        host: str = "127.0.0.1",
        port: int = 8084,
        *,
        max_connections: int = 2000,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        connection_factory: type[OutboundConnection] = OutboundConnection,
        reuse_port: bool = False,
    ) -> None:
        self.application = application
        self._pool = gevent.pool.Pool(max_connections)
        # gevent's default listen backlog (128) overflows in a burst of calls: the kernel then
        # drops the handshake's last ACK and that call waits for a SYN-ACK retry (1 s, 3 s, …).
        # reuse_port: sibling controller processes share the port and the kernel spreads the
        # switch's connections over their listen sockets (``sbc controller --processes N``).
        if reuse_port:  # a socket listening already, with the same backlog
            self._server = StreamServer(_reuse_port_listener(host, port), self._handle,
                                        spawn=self._pool)
        else:
            self._server = StreamServer((host, port), self._handle, spawn=self._pool,
                                        backlog=LISTEN_BACKLOG)
        self._command_timeout = command_timeout
        self._queue_size = queue_size
        self._factory = connection_factory
        self.connections: set[OutboundConnection] = set()
        self.accepted = 0
        self.failed = 0

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) actually bound (useful with port 0)."""
        return self._server.address[:2]

    def start(self) -> None:
        self._server.start()
        log.info("outbound ESL server listening on %s:%s", *self.address)

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self, timeout: Optional[float] = 5.0) -> None:
        """Stop accepting; wait up to ``timeout`` for calls in progress, then close them."""
        self._server.stop(timeout=timeout)
        for conn in list(self.connections):
            conn.close()

    def _handle(self, sock: _socket.socket, address: tuple) -> None:
        self.accepted += 1
        with contextlib.suppress(OSError):  # not a TCP socket (tests over UNIX sockets)
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            _enable_keepalive(sock)
        conn = self._factory(sock, address, command_timeout=self._command_timeout,
                             queue_size=self._queue_size)
        conn.start()
        self.connections.add(conn)
        try:
            self.application(conn)
        except (ChannelHungUp, ConnectionLost) as exc:
            log.info("%s: call ended: %s", conn.name, exc)
        except Exception:
            self.failed += 1
            log.exception("%s: application failed", conn.name)
        finally:
            self.connections.discard(conn)
            conn.close()


def _reuse_port_listener(host: str, port: int) -> _socket.socket:
    """A listening TCP socket with SO_REUSEPORT (Linux: every process binding it gets its own
    accept queue; connections are spread by a hash of their addresses)."""
    family = _socket.AF_INET6 if ":" in host else _socket.AF_INET
    sock = _socket.socket(family, _socket.SOCK_STREAM)
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(LISTEN_BACKLOG)
    sock.setblocking(False)
    return sock
