"""One ESL socket: a reader greenlet, FIFO command replies, and a bounded event dispatcher.

This closes the gaps of greenswitch's ``ESLProtocol``:
- every command has a timeout (a late reply is matched to its abandoned slot and discarded, so
  replies never shift onto the wrong command);
- writes go through one lock and ``sendall`` (greenswitch uses ``send``, which may write a part);
- on disconnect every pending command fails at once with :class:`ConnectionLost`
  (greenswitch's ``send`` waits forever);
- handler exceptions are logged and never kill the reader;
- handlers run in a separate dispatcher greenlet fed by a bounded queue: a slow handler cannot
  stall the reader (and so cannot delay command replies or execute completions); overflow is
  logged and counted in ``dropped_events``.

Internal waiters (command replies, execute completions, ``wait_for``) are resolved in the reader
itself, so they never sit behind user handlers.
"""
from __future__ import annotations

import contextlib
import logging
import socket as _socket
from collections import deque
from collections.abc import Callable
from typing import Any, Optional, Union

import gevent
import gevent.event
import gevent.lock
import gevent.queue

from esl.errors import CommandTimeout, ConnectionLost, NotConnected
from esl.protocol import Event, Frame, FrameParser, ProtocolError, encode_command

log = logging.getLogger(__name__)

DEFAULT_COMMAND_TIMEOUT = 10.0  # seconds for a command/reply or api/response
DEFAULT_QUEUE_SIZE = 10_000  # events buffered for handlers before overflow is dropped
RECV_SIZE = 65536

Handler = Callable[[Event], None]
Predicate = Callable[[Event], bool]


class _Pending:
    """One command awaiting its reply; ``abandoned`` after a timeout so the reply is dropped."""

    __slots__ = ("command", "result", "abandoned")

    def __init__(self, command: str) -> None:
        self.command = command
        self.result: gevent.event.AsyncResult = gevent.event.AsyncResult()
        self.abandoned = False


class EslConnection:
    """Shared machinery for inbound and outbound connections (not used directly)."""

    def __init__(
        self,
        sock: _socket.socket,
        *,
        command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        name: str = "esl",
    ) -> None:
        self._sock: Optional[_socket.socket] = sock
        self._parser = FrameParser()
        self._write_lock = gevent.lock.RLock()
        self._pending: deque[_Pending] = deque()
        self._handlers: dict[str, list[Handler]] = {}
        self._waiters: list[tuple[Predicate, gevent.event.AsyncResult]] = []
        self._queue: gevent.queue.Queue = gevent.queue.Queue(maxsize=queue_size)
        self._reader: Optional[gevent.Greenlet] = None
        self._dispatcher: Optional[gevent.Greenlet] = None
        self._closed = gevent.event.Event()
        self.command_timeout = command_timeout
        self.name = name
        self.dropped_events = 0
        self.handler_errors = 0
        self.events_received = 0
        self.disconnect_notice: Optional[Frame] = None
        self.close_reason: Optional[BaseException] = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._reader = gevent.spawn(self._read_loop)
        self._dispatcher = gevent.spawn(self._dispatch_loop)

    @property
    def connected(self) -> bool:
        return not self._closed.is_set()

    def close(self) -> None:
        """Close the socket; pending commands fail with ConnectionLost. Idempotent."""
        self._on_closed(ConnectionLost("closed locally"))
        reader = self._reader
        if reader is not None and reader is not gevent.getcurrent():
            reader.kill(block=False)

    def wait_closed(self, timeout: Optional[float] = None) -> bool:
        return self._closed.wait(timeout)

    # -- handlers ------------------------------------------------------------------------------
    def on(self, event_name: str, handler: Handler) -> None:
        """Call ``handler(event)`` for each event named ``event_name`` (CUSTOM: its subclass).

        ``"*"`` receives every event; ``"DISCONNECT"`` receives disconnect notices (as Events of
        the outer headers). Handlers run in the dispatcher greenlet, never in the reader.
        """
        self._handlers.setdefault(event_name, []).append(handler)

    def off(self, event_name: str, handler: Handler) -> None:
        handlers = self._handlers.get(event_name, [])
        if handler in handlers:
            handlers.remove(handler)

    # -- commands ------------------------------------------------------------------------------
    def send_command(
        self,
        command: str,
        headers: tuple[tuple[str, str], ...] | list[tuple[str, str]] = (),
        body: str = "",
        *,
        timeout: Optional[float] = None,
    ) -> Frame:
        """Send one command and return its reply frame (command/reply or api/response)."""
        pending = self._send(command, headers, body)
        return self._await(pending, timeout)

    def _send(self, command: str, headers=(), body: str = "") -> _Pending:
        return self._send_pipelined([(command, headers, body)])[0]

    def _send_pipelined(self, commands: list[tuple[str, Any, str]]) -> list[_Pending]:
        """Write several commands in ONE send, their replies awaited in order. Why one write:
        each write wakes the switch's socket thread once; the session start's four commands
        cost four wake-ups and four syscalls on both sides when written one by one."""
        data = b"".join(encode_command(command, headers, body) for command, headers, body in commands)
        pendings = [_Pending(command) for command, _, _ in commands]
        first = commands[0][0].split(" ", 1)[0]
        with self._write_lock:
            sock = self._sock
            if sock is None or self._closed.is_set():
                raise NotConnected(f"{self.name}: not connected ({first})")
            # Enqueue before writing, under the same lock: replies are strictly FIFO.
            self._pending.extend(pendings)
            try:
                sock.sendall(data)
            except OSError as exc:
                self._on_closed(ConnectionLost(f"{self.name}: write failed: {exc}"))
                raise ConnectionLost(f"{self.name}: write failed: {exc}") from exc
        return pendings

    def _await(self, pending: _Pending, timeout: Optional[float]) -> Frame:
        if timeout is None:
            timeout = self.command_timeout
        try:
            return pending.result.get(timeout=timeout)
        except gevent.Timeout:
            pending.abandoned = True
            raise CommandTimeout(
                f"{self.name}: no reply to {pending.command.split(chr(10))[0]!r} within {timeout}s"
            ) from None

    # -- waiting for events --------------------------------------------------------------------
    def wait_for(self, what: Union[str, Predicate], timeout: Optional[float] = None) -> Event:
        """Block until an event matches (name/subclass or predicate); raise on timeout/close.

        Only events arriving after the call are considered.
        """
        if isinstance(what, str):
            key = what
            predicate: Predicate = lambda ev: ev.dispatch_key == key or ev.name == key  # noqa: E731
        else:
            predicate = what
        result = self._add_waiter(predicate)
        try:
            return result.get(timeout=timeout)
        except gevent.Timeout:
            raise CommandTimeout(f"{self.name}: no matching event within {timeout}s") from None
        finally:
            self._remove_waiter(result)

    def _add_waiter(self, predicate: Predicate) -> gevent.event.AsyncResult:
        result = gevent.event.AsyncResult()
        if self._closed.is_set():
            result.set_exception(self.close_reason or ConnectionLost("closed"))
        else:
            self._waiters.append((predicate, result))
        return result

    def _remove_waiter(self, result: gevent.event.AsyncResult) -> None:
        self._waiters = [(p, r) for p, r in self._waiters if r is not result]

    # -- reader side ---------------------------------------------------------------------------
    def _read_loop(self) -> None:
        reason: BaseException = ConnectionLost(f"{self.name}: connection closed by peer")
        try:
            while True:
                sock = self._sock
                if sock is None:
                    break
                data = sock.recv(RECV_SIZE)
                if not data:
                    break
                for frame in self._parser.feed(data):
                    self._on_frame(frame)
        except ProtocolError as exc:
            log.error("%s: protocol error, dropping connection: %s", self.name, exc)
            reason = ConnectionLost(f"{self.name}: protocol error: {exc}")
        except OSError as exc:
            reason = ConnectionLost(f"{self.name}: read failed: {exc}")
        except gevent.GreenletExit:
            reason = ConnectionLost(f"{self.name}: closed locally")
        except Exception as exc:  # a bug here must not leave callers hanging
            log.exception("%s: reader crashed", self.name)
            reason = ConnectionLost(f"{self.name}: reader crashed: {exc}")
        finally:
            self._on_closed(reason)

    def _on_frame(self, frame: Frame) -> None:
        ctype = frame.content_type
        if ctype == "text/event-plain":
            self.events_received += 1
            self._on_event(frame.event())
        elif ctype in ("command/reply", "api/response"):
            self._on_reply(frame)
        elif ctype == "text/disconnect-notice":
            self.disconnect_notice = frame
            self._on_disconnect_notice(frame)
            self._enqueue("DISCONNECT", frame.headers)
        elif ctype == "auth/request":
            self._on_auth_request(frame)
        elif ctype == "text/rude-rejection":
            log.error("%s: rude rejection: %s", self.name, frame.body_text.strip())
            self._on_rude_rejection(frame)
        else:
            log.debug("%s: ignoring frame %r", self.name, frame)

    def _on_reply(self, frame: Frame) -> None:
        if not self._pending:
            log.warning("%s: reply with no pending command: %r", self.name, frame.reply_text)
            return
        pending = self._pending.popleft()
        if pending.abandoned:
            log.info("%s: discarding late reply to %r", self.name, pending.command.split("\n")[0])
            return
        pending.result.set(frame)

    def _on_event(self, event: Event) -> None:
        self._route_event(event)
        if self._waiters:
            for predicate, result in list(self._waiters):
                try:
                    matched = predicate(event)
                except Exception:
                    log.exception("%s: wait_for predicate raised", self.name)
                    matched = False
                if matched and not result.ready():
                    result.set(event)
        self._enqueue(event.dispatch_key, event)

    def deliver(self, event: Event) -> None:
        """Hand this connection's handlers an event seen on another connection (an agent
        leg's hold, app/voice/agent_holds.py), as if it had arrived here."""
        self._enqueue(event.dispatch_key, event)

    def _enqueue(self, key: Optional[str], event: Event) -> None:
        if key not in self._handlers and "*" not in self._handlers:
            return
        try:
            self._queue.put_nowait((key, event))
        except gevent.queue.Full:
            self.dropped_events += 1
            if self.dropped_events == 1 or self.dropped_events % 1000 == 0:
                log.warning(
                    "%s: handler queue full (%d), dropped %d event(s) so far",
                    self.name, self._queue.maxsize, self.dropped_events,
                )

    def _dispatch_loop(self) -> None:
        while True:
            key, event = self._queue.get()
            if key is None and event is None:
                return
            for handler in list(self._handlers.get(key, ())) + list(self._handlers.get("*", ())):
                try:
                    handler(event)
                except Exception:
                    self.handler_errors += 1
                    log.exception("%s: handler %r failed on %s", self.name, handler, key)

    def _on_closed(self, reason: BaseException) -> None:
        if self._closed.is_set():
            return
        self.close_reason = reason
        self._closed.set()
        # No lock here: a writer blocked in sendall must not stall the reader; swapping the
        # attribute is atomic under gevent and closing the socket wakes that writer up.
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed by the peer
                sock.close()
        while self._pending:
            pending = self._pending.popleft()
            if not pending.result.ready():
                pending.result.set_exception(ConnectionLost(str(reason)))
        for _, result in list(self._waiters):
            if not result.ready():
                result.set_exception(ConnectionLost(str(reason)))
        self._on_connection_lost(reason)
        # Let queued handlers finish, then stop the dispatcher.
        try:
            self._queue.put_nowait((None, None))
        except gevent.queue.Full:
            if self._dispatcher is not None:
                self._dispatcher.kill(block=False)

    # -- hooks for subclasses ------------------------------------------------------------------
    def _route_event(self, event: Event) -> None:
        """Connection-specific bookkeeping in the reader (keep it fast)."""

    def _on_disconnect_notice(self, frame: Frame) -> None:
        """``text/disconnect-notice`` (linger or final); outbound connections track it."""

    def _on_auth_request(self, frame: Frame) -> None:
        """``auth/request``: only inbound connections authenticate."""

    def _on_rude_rejection(self, frame: Frame) -> None:
        """``text/rude-rejection`` (ACL refused us): inbound connections report it."""

    def _on_connection_lost(self, reason: BaseException) -> None:
        """The socket is gone: subclasses fail what waits on it (executes, bgapi jobs)."""
