"""Simulated outbound socket: FreeSWITCH's ``socket host:port async full`` dialling the controller.

Behaviour follows the captures (see tests/fixtures/esl_captures/*/notes.md): nothing is sent
before ``connect``; ``sendmsg`` is answered ``+OK`` at once and apps run one after another in
the channel's own greenlet; Event-UUID comes back as Application-UUID; hang-up sequence
CHANNEL_HANGUP, [interrupted app's EXECUTE_COMPLETE], CHANNEL_UNPARK, the socket app's
EXECUTE_COMPLETE, CHANNEL_STATE CS_HANGUP, [RECORD_STOP], CHANNEL_STATE CS_REPORTING,
CHANNEL_HANGUP_COMPLETE, then the linger / disconnect notices.
"""
from __future__ import annotations

import contextlib
import json
import logging
import re
import socket as _socket
import time
import uuid as _uuid
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import gevent
import gevent.event
import gevent.lock
import gevent.queue

from app.routing.node_modules import contract_modules
from esl.protocol import Event, encode_event_plain, parse_event_plain, parse_header_lines
from tests.simulator import consult
from tests.simulator import media_files as M
from tests.simulator import templates as T
from tests.simulator.channel import SimChannel
from tests.simulator.fsparse import bridge_exports
from tests.simulator.scenario import BridgeOutcome, Call
from tests.simulator.switch_globals import bridged_leg_offer

log = logging.getLogger(__name__)

GOODBYE = "Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n"
# mod_event_socket.c parse_command "myevents": exactly these, and only the channel's own
# (PLAYBACK_*, RECORD_*, CHANNEL_HOLD/UNHOLD, CHANNEL_CALLSTATE, CALL_UPDATE and CUSTOM events
# need an ``event`` subscription).
MYEVENTS = frozenset({
    "CHANNEL_ANSWER", "CHANNEL_APPLICATION", "CHANNEL_BRIDGE", "CHANNEL_CREATE", "CHANNEL_DATA",
    "CHANNEL_DESTROY", "CHANNEL_EXECUTE", "CHANNEL_EXECUTE_COMPLETE", "CHANNEL_HANGUP",
    "CHANNEL_HANGUP_COMPLETE", "CHANNEL_ORIGINATE", "CHANNEL_UUID", "CHANNEL_OUTGOING",
    "CHANNEL_PARK", "CHANNEL_PROGRESS", "CHANNEL_PROGRESS_MEDIA", "CHANNEL_STATE",
    "CHANNEL_UNBRIDGE", "CHANNEL_UNPARK", "DETECTED_SPEECH", "DTMF", "NOTALK", "TALK",
})
# mod_event_socket.c parse_command: on an outbound socket without "full" these answer
# "-ERR command not found" (connect, myevents, getvar, filter, resume, sendmsg still work).
FULL_CONTROL_COMMANDS = {"sendevent", "api", "bgapi", "log", "linger", "nolinger", "nolog",
                         "event", "nixevent", "noevents"}


@dataclass
class ReceivedCommand:
    """A command the controller sent, as the simulator parsed it."""

    name: str  # first word: connect, sendmsg, api, event, linger, exit, ...
    line: str  # the full first line
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    at: float = 0.0

    @property
    def app(self) -> Optional[str]:
        return self.headers.get("execute-app-name")

    @property
    def app_arg(self) -> str:
        return self.headers.get("execute-app-arg", self.body)


# Every simulated call of the process: the inbound port's ``api uuid_*`` reaches their channels
# (on a switch, any ESL connection can act on any channel, not only the call's own socket).
LIVE_CALLS: "weakref.WeakSet[SimOutboundCall]" = weakref.WeakSet()


class SimOutboundCall:
    """One simulated call dialling the controller. Use :meth:`start` then :meth:`wait`."""

    def __init__(self, scenario: Call, address: tuple[str, int]) -> None:
        self.scenario = scenario
        self.address = address
        self.timing = scenario.timing
        variables = dict(scenario.variables)
        if scenario.setup_guard is not None:
            variables.setdefault("sbc_setup_guard", "true")
        self.channel = SimChannel(scenario.caller, scenario.callee, scenario.uuid, variables)
        self.setup_guard_armed = scenario.setup_guard is not None
        self.setup_guard_fired = False
        self.uuid = self.channel.uuid
        self.commands: list[ReceivedCommand] = []
        self.emitted: list[Event] = []  # every event actually written, parsed back
        self.happened: list[str] = []   # every event of the channel, subscribed to or not
        self.frames_out: list[bytes] = []
        self.done = gevent.event.Event()
        self.hangup_done = gevent.event.Event()
        self.connected_at: Optional[float] = None
        self._sock: Optional[_socket.socket] = None
        self._wlock = gevent.lock.RLock()
        self._apps: gevent.queue.Queue = gevent.queue.Queue()
        self._hung = gevent.event.Event()
        self._app_idle = gevent.event.Event()
        self._app_idle.set()
        self._current_app: Optional[str] = None
        self._interrupt = gevent.event.Event()
        self._break = gevent.event.Event()
        self._myevents = False
        self._subscribed: set[str] = set()
        self._nixed: set[str] = set()  # nixevent: these never reach the controller
        self._linger: Optional[int] = None  # None: no linger; -1: until exit; N seconds
        self._lingering_requested = False
        self._stalled = False
        self._thawed = gevent.event.Event()  # cleared by freeze()
        self._thawed.set()
        self._closed = False
        self._recording: Optional[str] = None
        self._pending_presses = list(scenario.presses)
        self._bridges = list(scenario.bridges)
        self._bridge_kill: dict[str, gevent.event.Event] = {}
        self._kill_cause: dict[str, str] = {}  # b-leg uuid -> the cause its uuid_kill named
        self.controls: list[str] = []  # uuid_hold / uuid_send_dtmf api commands that applied
        # attended transfers (tests/simulator/consult.py): the legs moved around the caller
        self.legs: dict[str, consult.SimLeg] = {}
        self.bridge_phones: dict[str, Any] = {}      # b-leg uuid -> the RingingPhone it rang
        self.consult_phones = list(scenario.consult_phones)
        self.three_way: dict[str, set[str]] = {}  # three-way rooms and the legs moved in
        self.killed_legs: list[str] = []             # legs hung up by uuid_kill or picked off
        self.kill_causes: dict[str, str] = {}        # leg -> the cause its uuid_kill named
        self.rooms: dict[str, str] = {}              # xfer conference room -> the leg moved into it
        self.rejoined: list[str] = []                # the legs the caller met in such a room
        self.alone_in_room = gevent.event.Event()    # the caller joined such a room no leg came to
        self.kicked = gevent.event.Event()           # ``conference <room> kick all`` took it out
        LIVE_CALLS.add(self)  # the inbound port reaches this call's channels as the switch's does
        self._greenlets: list[gevent.Greenlet] = []
        self.socket_app_uuid = str(_uuid.uuid4())
        self.error: Optional[BaseException] = None
        self.loaded_modules: set[str] = set(contract_modules()) - set(scenario.missing_modules)
        self.refused_prompts: list[str] = []   # prompts the switch would not play ("Invalid Args")
        self.audio_fork: Optional[str] = None  # the URL uuid_audio_fork streams to
        self.audio_bug: Optional[tuple[str, str, str]] = None  # uuid_audio start (dir, kind, level)
        self.avmd: Optional[gevent.Greenlet] = None  # the beep mod_avmd will report (avmd_start)
        self.avmd_stopped = False

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> "SimOutboundCall":
        self._greenlets.append(gevent.spawn(self._run))
        return self

    def wait(self, timeout: float = 10.0) -> bool:
        return self.done.wait(timeout)

    def executed(self, app: str | None = None) -> list[tuple[str, str]]:
        """(app, arg) of every ``sendmsg execute`` received, optionally only for ``app``."""
        return [(c.app or "", c.app_arg) for c in self.commands
                if c.name == "sendmsg" and c.headers.get("call-command") == "execute"
                and (app is None or c.app == app)]

    def actions(self) -> list[tuple[str, str]]:
        """(app, arg) of every ``sendmsg execute`` and ``("uuid_answer", "")`` for every
        ``api uuid_answer``, in the order received: what was done to the caller."""
        done = []
        for c in self.commands:
            if c.line.startswith("api uuid_answer"):
                done.append(("uuid_answer", ""))
            elif c.name == "sendmsg" and c.headers.get("call-command") == "execute":
                done.append((c.app or "", c.app_arg))
        return done

    def events_named(self, name: str) -> list[Event]:
        """Events actually written to the controller with this name (CUSTOM: subclass)."""
        return [e for e in self.emitted if e.dispatch_key == name]

    def kill(self) -> None:
        for g in self._greenlets:
            g.kill(block=False)
        self._close()

    def freeze(self) -> None:
        """Fault: the switch hangs — the socket stays open, events stop and commands wait
        unanswered until ``thaw()``."""
        self._thawed.clear()

    def thaw(self) -> None:
        self._thawed.set()

    def _setup_guard(self, seconds: float) -> None:
        """The dialplan's ``sched_hangup``: fires unless the controller cancelled it."""
        gevent.sleep(seconds)
        if not self.setup_guard_armed or self._hung.is_set():
            return
        self.setup_guard_fired = True
        if self.connected_at is not None:
            self._spawn_hangup("NORMAL_CIRCUIT_CONGESTION", "send_refuse")
        else:  # never connected: the socket app just ends with the channel
            self._close()

    def _run(self) -> None:
        if self.scenario.setup_guard is not None:
            self._greenlets.append(gevent.spawn(self._setup_guard, self.scenario.setup_guard))
        try:
            self._sock = _socket.create_connection(self.address, timeout=5)
            self._sock.settimeout(None)
            self._sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            self._greenlets.append(gevent.spawn(self._app_runner))
            self._read_commands()
        except Exception as exc:  # surfaced to tests via .error
            if not self._closed:
                self.error = exc
                log.exception("simulated call failed")
        finally:
            self._close()

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):  # already reset by the controller: nothing left to close
                sock.close()
        self.done.set()

    # -- output --------------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        if self._stalled or self._closed or not self._thawed.is_set():
            return
        with self._wlock:
            sock = self._sock
            if sock is None:
                return
            try:
                sock.sendall(data)
            except OSError:
                self._close()
                return
        self.frames_out.append(data)

    def _reply(self, text: str) -> None:
        if self.timing.reply_delay:
            gevent.sleep(self.timing.reply_delay)
        self._write(f"Content-Type: command/reply\nReply-Text: {text}\n\n".encode())

    def _api_reply(self, body: str) -> None:
        raw = body.encode()
        self._write(f"Content-Type: api/response\nContent-Length: {len(raw)}\n\n".encode() + raw)

    def _passes(self, name: str, subclass: Optional[str]) -> bool:
        if name in self._nixed:
            return False
        if "ALL" in self._subscribed:
            return True
        if subclass:
            return subclass in self._subscribed
        if name in self._subscribed:
            return True
        return self._myevents and name in MYEVENTS

    def emit(self, event_name: str, body: str = "", **kw) -> None:
        subclass = kw.get("subclass")
        self.happened.append(subclass or event_name)
        if not self._passes(event_name, subclass):
            return
        if self.timing.event_gap:
            gevent.sleep(self.timing.event_gap)
        data = encode_event_plain(self.channel.event_headers(event_name, **kw), body)
        self.emitted.append(parse_event_plain(data.split(b"\n\n", 1)[1]))
        self._write(data)

    # -- input ---------------------------------------------------------------------------------
    def _read_commands(self) -> None:
        buf = b""
        while self._sock is not None:
            try:
                data = self._sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            while True:
                cmd, buf = _split_command(buf)
                if cmd is None:
                    break
                cmd.at = time.monotonic()
                self.commands.append(cmd)
                self._thawed.wait()
                if not self._stalled:
                    self._handle(cmd)

    @property
    def full_control(self) -> bool:
        return any(a.lower() == "full" for a in self.scenario.socket_args)

    @property
    def socket_data(self) -> str:
        return " ".join([f"{self.address[0]}:{self.address[1]}", *self.scenario.socket_args])

    def _handle(self, cmd: ReceivedCommand) -> None:
        name, line = cmd.name, cmd.line
        if name in FULL_CONTROL_COMMANDS and not self.full_control:
            self._reply("-ERR command not found")
        elif name == "connect":
            self.connected_at = time.monotonic()
            self._write(self.channel.connect_reply(
                async_mode=any(a.lower() == "async" for a in self.scenario.socket_args),
                full=self.full_control))
            self._greenlets.append(gevent.spawn(self._timeline))
        elif name == "myevents":
            self._myevents = True
            self._reply("+OK Events Enabled")
            if self.scenario.park_event:
                self.emit("CHANNEL_PARK")
        elif name == "linger":
            parts = line.split()
            self._linger = int(parts[1]) if len(parts) > 1 else -1
            self._reply("+OK will linger" if self._linger < 0 else f"+OK will linger {self._linger} seconds")
        elif name == "nolinger":
            self._linger = None
            self._reply("+OK will not linger")
        elif name == "event":
            for word in line.split()[2:]:
                self._subscribed.add(word)
                self._nixed.discard(word)
            self._reply("+OK event listener enabled plain")
        elif name == "nixevent":
            self._nixed.update(line.split()[1:])
            self._reply("+OK events nixed")
        elif name == "filter":
            parts = line.split(None, 2)
            self._reply(f"+OK filter added. [{parts[1]}]=[{parts[2] if len(parts) > 2 else ''}]")
        elif name == "sendmsg":
            self._sendmsg(cmd)
        elif name == "api":
            self._api_reply(self._api(line[4:].strip()))
        elif name == "bgapi":  # the reply at once, the command's result in a BACKGROUND_JOB event
            job = cmd.headers.get("Job-UUID") or str(_uuid.uuid4())
            self._reply(f"+OK Job-UUID: {job}")
            self._api(line[6:].strip())
        elif name == "exit":
            self._reply("+OK bye")
            self._disconnect_notice(final=True)
            self._close()
        else:
            self._reply("-ERR command not found")

    def _sendmsg(self, cmd: ReceivedCommand) -> None:
        self._reply("+OK")
        call_command = cmd.headers.get("call-command", "")
        if call_command == "execute":
            self._apps.put(cmd)
        elif call_command == "hangup":
            self._spawn_hangup(cmd.headers.get("hangup-cause", "NORMAL_CLEARING"), "send_bye")

    def _api(self, command: str) -> str:
        parts = command.split()
        if not parts:
            return "-ERR no command\n"
        verb, args = parts[0], parts[1:]
        if verb == "sched_del":  # group = the channel uuid for the dialplan's sched_hangup
            deleted = int(bool(args) and args[0] == self.uuid and self.setup_guard_armed
                          and not self.setup_guard_fired)
            if deleted:
                self.setup_guard_armed = False
            return f"+OK Deleted: {deleted}\n"
        if verb == "uuid_answer":  # mod_commands: switch_channel_answer in the socket's thread
            if args[:1] != [self.uuid] or self._hung.is_set():
                return "-ERROR\n"
            self.answer_now()
            return "+OK\n"
        if verb == "uuid_kill":
            target = args[0] if args else ""
            if consult.kill(self, target, args[1] if len(args) > 1 else "NORMAL_CLEARING"):
                return "+OK\n"
            if target == self.uuid and not self._hung.is_set():
                self._spawn_hangup(args[1] if len(args) > 1 else "NORMAL_CLEARING", "send_bye")
                return "+OK\n"
            if target in self._bridge_kill:
                self._kill_cause[target] = args[1] if len(args) > 1 else "NORMAL_CLEARING"
                self._bridge_kill[target].set()
                return "+OK\n"
            return "-ERR No such channel!\n"
        if verb == "uuid_hold":  # [off] <uuid>: the caller's leg, or its bridged b-leg
            target = args[1] if args[:1] == ["off"] and len(args) > 1 else (args[0] if args else "")
            if target in self._bridge_kill or (target == self.uuid and not self._hung.is_set()):
                self.controls.append(command)
                return "+OK Success\n"
            return "-ERR No such channel!\n"
        if verb == "uuid_send_dtmf":
            if args and args[0] == self.uuid and not self._hung.is_set():
                self.controls.append(command)
                return "+OK Success\n"
            return "-ERR No such channel!\n"
        if verb == "uuid_exists":
            leg = self.legs.get(args[0]) if args else None
            alive = leg is not None and not leg.ended.is_set()  # a hung-up leg is gone at once
            return "true" if args and (alive or args[0] == self.uuid) else "false"
        if verb == "uuid_transfer":
            return consult.uuid_transfer(self, args, command)
        if verb == "conference" and args and args[0].startswith("xfer-"):
            return consult.conference_api(self, args)
        if verb == "uuid_bridge":
            return consult.bridge(self, args, command)
        if verb == "uuid_dump" and args and args[0] in self.legs:
            return consult.dump(self, args[0])
        if verb == "originate":
            return consult.originate(self, command)
        if verb in ("uuid_setvar", "uuid_getvar") and len(args) >= 2 and args[0] in self.legs:
            reply = consult.setvar(self, args, command) if verb == "uuid_setvar" else consult.getvar(self, args)
            return reply or "-ERR No such channel!\n"
        if verb == "uuid_setvar" and len(args) >= 2:
            if args[0] != self.uuid:
                return "-ERR No such channel!\n"
            value = command.split(None, 3)[3] if len(args) >= 3 else ""
            self.channel.vars[args[1]] = value
            return "+OK\n"
        if verb == "uuid_getvar" and len(args) >= 2:
            return self.channel.vars.get(args[1], "_undef_")
        if verb == "uuid_audio_fork" and len(args) >= 2:
            return self._audio_fork(args)
        if verb == "uuid_break":
            self._break.set()
            return "+OK\n"
        if verb == "uuid_audio":
            return self._uuid_audio(command, args)
        if verb == "uuid_record":
            return self._uuid_record(command, args)
        if verb == "uuid_broadcast":  # <uuid> <path, single-quoted when it has spaces> [aleg|bleg|both]
            target = args[0] if args else ""
            if target == self.uuid and not self._hung.is_set() or target in self._bridge_kill:
                self.controls.append(command)
                return "+OK Message sent successfully\n"
            return "-ERR No such channel!\n"
        return f"-ERR {verb} Command not found!\n"

    def _uuid_record(self, command: str, args: list[str]) -> str:
        """mod_commands ``uuid_record <uuid> start|stop <path>``: RECORD_START at once; RECORD_STOP
        when stopped (or at hang-up, as record_session's)."""
        if len(args) < 3 or args[1] not in ("start", "stop"):
            return "-USAGE: <uuid> [start|stop] <path> [<limit>]\n"
        if args[0] != self.uuid or self._hung.is_set():
            return "-ERR Cannot locate session!\n"
        self.controls.append(command)
        if args[1] == "start":
            self._recording = args[2]
            self.emit("RECORD_START", tail=[("Record-File-Path", args[2])])
        elif self._recording == args[2]:
            self._record_stop()
        return "+OK Success\n"

    def _uuid_audio(self, command: str, args: list[str]) -> str:
        """mod_commands ``uuid_audio <uuid> [start [read|write] [mute|level <level>]|stop]``
        (session_audio_function, 1.10): ``+OK`` for a start or a stop (a stop with no bug is
        ``+OK`` too), the usage line for anything else, ``-ERR No Such Channel!`` for another
        uuid. ``audio_bug``: (direction, kind, level) of the bug attached, None after stop."""
        usage = "-USAGE: <uuid> [start [read|write] [mute|level <level>]|stop]\n"
        if len(args) < 2:
            return usage
        if args[0] != self.uuid or self._hung.is_set():
            return "-ERR No Such Channel!\n"
        if args[1].lower() == "stop":
            self.audio_bug = None
            self.controls.append(command)
            return "+OK\n"
        if args[1].lower() != "start" or len(args) < 5 or args[2].lower() not in ("read", "write") \
                or args[3].lower() not in ("mute", "level"):
            return usage
        self.audio_bug = (args[2].lower(), args[3].lower(), args[4])
        self.controls.append(command)
        return "+OK\n"

    def _audio_fork(self, args: list[str]) -> str:
        """mod_audio_fork: ``start <ws(s) url> <mix> <rate> [metadata]`` / ``stop``. ``+OK`` only
        attaches the bug; the WebSocket connects afterwards and the outcome is a CUSTOM event
        (``mod_audio_fork::connect``, or ``::connect_failed`` with ``{"reason": ...}``), which
        only a subscription delivers. A second start while attached fails."""
        if args[0] != self.uuid:
            return "-ERR No such channel!\n"
        if args[1] == "stop":
            self.audio_fork = None
            return "+OK Success\n"
        if not (args[1] == "start" and len(args) >= 5 and args[2].startswith(("ws://", "wss://"))
                and args[3] in ("mono", "mixed", "stereo") and args[4] in ("8k", "16k")):
            return "-ERR Invalid arguments\n"
        if self.audio_fork is not None:
            return "-ERR Operation Failed\n"  # "bug audio_fork already attached!"
        self.audio_fork = args[2]
        if not self.channel.media:  # "Sending early media"
            self.channel.pre_answer()
            self.emit("CHANNEL_PROGRESS_MEDIA")
        self._greenlets.append(gevent.spawn_later(0.01, self._audio_fork_outcome))
        return "+OK Success\n"

    def _audio_fork_outcome(self) -> None:
        reason = self.scenario.listen_fails
        if reason is None:
            self.emit("CUSTOM", subclass="mod_audio_fork::connect", with_vars=True)
        else:
            self.emit("CUSTOM", subclass="mod_audio_fork::connect_failed", with_vars=True,
                      body=json.dumps({"reason": reason}, separators=(",", ":")))

    # -- timeline (caller behaviour) -------------------------------------------------------------
    def _timeline(self) -> None:
        start = self.connected_at or time.monotonic()
        for step in sorted(self.scenario.steps, key=lambda s: s.at):
            delay = start + step.at - time.monotonic()
            if delay > 0:
                gevent.sleep(delay)
            if self._closed:
                return
            if step.kind == "hangup":
                self._spawn_hangup(step.arg or "NORMAL_CLEARING", "recv_bye")
            elif step.kind == "dtmf":
                for digit in step.arg:
                    self._dtmf(digit)
            elif step.kind == "hold" and not self._hung.is_set():
                self.channel.hold()
                self.emit("CHANNEL_CALLSTATE", tail=[("Original-Channel-Call-State", "ACTIVE")])
                self.emit("CHANNEL_HOLD")
                self.emit("CUSTOM", subclass="sofia::reinvite")
            elif step.kind == "unhold" and not self._hung.is_set():
                self.channel.unhold()
                self.emit("CHANNEL_CALLSTATE", tail=[("Original-Channel-Call-State", "HELD")])
                self.emit("CHANNEL_UNHOLD")
                self.emit("CUSTOM", subclass="sofia::reinvite")
                self.channel.call_state = "ACTIVE"
                self.emit("CHANNEL_CALLSTATE", tail=[("Original-Channel-Call-State", "UNHELD")])
            elif step.kind == "fault":
                self._fault(step.arg)

    def _fault(self, kind: str) -> None:
        if kind == "drop":
            self._close()
        elif kind == "stall":
            self._stalled = True
        elif kind == "garbage":
            self._write(b"Content-Length: banana\nContent-Type: text/event-plain\n\n")

    def answer_now(self) -> None:
        """switch_channel_answer: media, then CHANNEL_ANSWER (nothing when already answered)."""
        if self.channel.answer_state != "answered":
            self.channel.pre_answer()
            self.emit("CHANNEL_PROGRESS_MEDIA")
            self.channel.answer()
            self.emit("CHANNEL_ANSWER")

    def _dtmf(self, digit: str) -> None:
        self.emit("DTMF", tail=[("DTMF-Digit", digit), ("DTMF-Duration", "2240"), ("DTMF-Source", "RTP")])

    # -- apps ----------------------------------------------------------------------------------
    def _app_runner(self) -> None:
        while not self._closed:
            cmd: ReceivedCommand = self._apps.get()
            tick = self.timing.media_tick if self.channel.media else self.timing.park_tick
            if tick:
                # switch_ivr_park without media: switch_yield(20000), then one queued app;
                # with media: one frame read (20 ms) between parses of the queue; the
                # loop's ticks start when the socket application parked the channel
                parked = time.monotonic() - (self.connected_at or time.monotonic())
                self._sleep(tick - parked % tick)
            if self._hung.is_set():
                continue  # FreeSWITCH does not run apps queued on a dead channel
            self._app_idle.clear()
            try:
                self._run_app(cmd)
            except Exception:
                log.exception("simulated app failed")
            finally:
                self._current_app = None
                self._app_idle.set()

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless the channel hangs up (False) — media apps stop at hang-up."""
        return not self._interrupt.wait(seconds)

    def _run_app(self, cmd: ReceivedCommand) -> None:
        app, arg = cmd.app or "", cmd.app_arg
        app_uuid = cmd.headers.get("Event-UUID") or str(_uuid.uuid4())
        self._current_app = app
        ch = self.channel
        ch.last_app, ch.last_arg = app, arg
        ch.vars["current_application"] = app
        if arg:
            ch.vars["current_application_data"] = arg
        base_tail = [("Application", app)] + ([("Application-Data", arg)] if arg else [])
        self.emit("CHANNEL_EXECUTE", tail=base_tail + [("Application-UUID", app_uuid)])
        behaviour = APP_BEHAVIOURS.get(app, _app_default)
        response, extra_vars = behaviour(self, arg)
        if response not in ("_none_", ""):
            ch.vars["current_application_response"] = response
        ch.last_response = response
        self.emit("CHANNEL_EXECUTE_COMPLETE", extra_vars=extra_vars,
                  tail=base_tail + [("Application-Response", response), ("Application-UUID", app_uuid)])

    # -- hang-up -------------------------------------------------------------------------------
    def _spawn_hangup(self, cause: str, disposition: str) -> None:
        if self._hung.is_set():
            return
        self._hung.set()
        self._greenlets.append(gevent.spawn(self._hangup, cause, disposition))

    def _hangup(self, cause: str, disposition: str) -> None:
        ch = self.channel
        ch.hangup(cause, disposition)
        self.emit("CHANNEL_HANGUP")
        self._interrupt.set()
        self._app_idle.wait(5)
        self.emit("CHANNEL_UNPARK")
        response = ch.last_response or "_none_"
        self.emit("CHANNEL_EXECUTE_COMPLETE", tail=[
            ("Application", "socket"), ("Application-Data", self.socket_data),
            ("Application-Response", response), ("Application-UUID", self.socket_app_uuid)])
        ch.set_state("CS_HANGUP")
        self.emit("CHANNEL_STATE")
        if self._recording:
            self._record_stop()
        ch.set_state("CS_REPORTING")
        self.emit("CHANNEL_STATE")
        ch.finalize_vars()
        self.emit("CHANNEL_HANGUP_COMPLETE")
        self.hangup_done.set()
        if self._linger is None:
            self._disconnect_notice(final=True)
            self._close()
            return
        self._disconnect_notice(final=False)
        if self._linger >= 0:
            gevent.sleep(self._linger * self.timing.linger_scale)
            if not self._closed:
                self._disconnect_notice(final=True)
                self._close()

    def _disconnect_notice(self, final: bool) -> None:
        if final:
            body = GOODBYE.encode()
            self._write(("Content-Type: text/disconnect-notice\n"
                         f"Controlled-Session-UUID: {self.uuid}\n"
                         "Content-Disposition: disconnect\n"
                         f"Content-Length: {len(body)}\n\n").encode() + body)
        else:
            name = self.channel.headers.get("Channel-Name", "")
            self._write(("Content-Type: text/disconnect-notice\n"
                         f"Controlled-Session-UUID: {self.uuid}\n"
                         "Content-Disposition: linger\n"
                         f"Channel-Name: {name}\n"
                         f"Linger-Time: {self._linger}\n"
                         "Content-Length: 0\n\n").encode())

    def _record_stop(self) -> None:
        path = self._recording or ""
        self._recording = None
        secs = max(0.0, time.monotonic() - (self.connected_at or time.monotonic()))
        samples = int(secs * 8000)
        self.emit("RECORD_STOP", tail=[("Record-File-Path", path), ("Record-Completion-Cause", "success-silence")],
                  extra_vars={"record_file_size": str(44 + samples * 4), "record_samples": str(samples),
                              "record_seconds": str(int(secs)), "record_ms": str(int(secs * 1000)),
                              "record_completion_cause": "success-silence"})

    # -- helpers for behaviours ----------------------------------------------------------------
    def media_seconds(self, path: str, default: float) -> float:
        for key, secs in self.scenario.media_seconds.items():
            if key == path or key in path:
                return secs
        return default

    def next_bridge(self) -> BridgeOutcome:
        return self._bridges.pop(0) if self._bridges else BridgeOutcome()

    def take_presses(self) -> list[tuple[str, float, float]]:
        presses, self._pending_presses = self._pending_presses, []
        return presses


def _split_command(buf: bytes) -> tuple[Optional[ReceivedCommand], bytes]:
    end = buf.find(b"\n\n")
    if end < 0:
        return None, buf
    head = buf[:end].decode("utf-8", "replace")
    rest = buf[end + 2:]
    first, _, header_text = head.partition("\n")
    headers = {n.lower() if n.lower() in ("call-command", "execute-app-name", "execute-app-arg",
                                          "hangup-cause", "content-length", "content-type",
                                          "event-lock") else n: v
               for n, v in parse_header_lines(header_text, decode=False)}
    body = ""
    length = headers.get("content-length")
    if length and length.isdigit():
        if len(rest) < int(length):
            return None, buf
        body = rest[: int(length)].decode("utf-8", "replace")
        rest = rest[int(length):]
    first = first.strip()
    return ReceivedCommand(first.split(" ", 1)[0], first, headers, body), rest


# -- per-app behaviours: (call, arg) -> (Application-Response, extra variables) -------------------
AppBehaviour = Callable[[SimOutboundCall, str], tuple[str, dict]]


def _app_default(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    call._sleep(call.timing.app_default)
    return "_none_", {}


def _app_answer(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    call._sleep(call.timing.answer)
    call.answer_now()
    return "_none_", {}


def _app_pre_answer(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    if not call.channel.media:
        call.channel.pre_answer()
        call.emit("CHANNEL_PROGRESS_MEDIA")
    return "_none_", {}


_TONE_MS = re.compile(r"%\((\d+),")


def _media_length(call: SimOutboundCall, path: str, default: float) -> float:
    return call.media_seconds(path, default)


def _app_playback(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    call._break.clear()
    if not M.file_opens(arg, call.loaded_modules):
        return "FILE NOT FOUND", {}  # "Invalid file format": no PLAYBACK_START
    stream = M.stream_seconds(arg)
    secs = stream if stream is not None else _media_length(call, arg, call.timing.playback)
    limit = call.channel.vars.get("playback_timeout_sec", "")
    if limit.isdigit() and int(limit) > 1:  # switch_ivr_play_file: honoured only above 1
        secs = min(secs, float(limit))
    call.emit("PLAYBACK_START", tail=[("Playback-File-Path", arg)])
    started = time.monotonic()
    finished = True
    deadline = started + secs
    while time.monotonic() < deadline:
        if call._interrupt.wait(min(0.01, max(0.0, deadline - time.monotonic()))):
            finished = False
            break
        if call._break.is_set():
            break
    played = time.monotonic() - started
    ms = int(played * 1000)
    extra = {"playback_last_offset_pos": str(ms * 8), "playback_seconds": str(int(played)),
             "playback_ms": str(ms), "playback_samples": str(ms * 8)}
    call.channel.vars.update(extra)
    response = "FILE PLAYED" if finished else "PLAYBACK ERROR"
    call.emit("PLAYBACK_STOP", tail=[("Playback-File-Path", arg), ("Playback-Status", "done" if finished else "break")])
    return response, {}


def _breakable_wait(call: SimOutboundCall, seconds: float) -> None:
    """Like switch_ivr_sleep / speak: ends early on hang-up or on CF_BREAK (``uuid_break``)."""
    call._break.clear()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not call._break.is_set():
        if call._interrupt.wait(min(0.01, max(0.0, deadline - time.monotonic()))):
            return


def _app_speak(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    _breakable_wait(call, _media_length(call, arg, call.timing.speak))
    return "_none_", {}


def _app_sleep(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    ms = int(arg) if arg.strip().isdigit() else 0
    _breakable_wait(call, ms / 1000.0)
    return "_none_", {}


def _app_set(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    name, _, value = arg.partition("=")
    if name:
        call.channel.vars[name.strip()] = value
    return "_none_", {}


def _app_unset(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    call.channel.vars.pop(arg.strip(), None)
    return "_none_", {}


def _app_hangup(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    call._spawn_hangup(arg.strip() or "NORMAL_CLEARING", "send_bye")
    call._interrupt.wait(1.0)
    return "_none_", {}


def _fs_split(arg: str) -> list[str]:
    """Split app data on spaces like switch_separate_string(): a backslash escapes quotes,
    spaces and backslashes, and a pair of single quotes groups text (quotes removed). (Added by H4: a TTS
    prompt ``'say:Press 1 for sales'`` is one argument in FreeSWITCH.)"""
    out: list[str] = []
    cur: list[str] = []
    quoted = have = False
    i = 0
    while i < len(arg):
        ch = arg[i]
        if ch == "\\" and i + 1 < len(arg):
            nxt = arg[i + 1]
            # cleanup_separated_string(): only quotes, the delimiter, backslash and \n \r \t \s
            # are unescaped; any other backslash (a regex's \d) stays as written
            cur.append({"n": "\n", "r": "\r", "t": "\t", "s": " "}.get(nxt, nxt)
                       if nxt in "'\" \\nrts" else "\\" + nxt)
            have = True
            i += 2
            continue
        if ch == "'" and (quoted or "'" in arg[i + 1:]):
            quoted, have = not quoted, True
        elif ch == " " and not quoted:
            if have:
                out.append("".join(cur))
            cur, have = [], False
        else:
            cur.append(ch)
            have = True
        i += 1
    if have:
        out.append("".join(cur))
    return out


def _app_play_and_get_digits(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    # min max tries timeout terminators prompt invalid var regex digit_timeout
    parts = _fs_split(arg)
    max_digits = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 128
    tries = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 1
    timeout_ms = int(parts[3]) if len(parts) > 3 and parts[3].isdigit() else 5000
    terminators = parts[4] if len(parts) > 4 else "#"
    var = parts[7] if len(parts) > 7 else "pagd_digits"
    regex = parts[8] if len(parts) > 8 else None
    prompt = parts[5] if len(parts) > 5 else ""
    if M.say_refused(prompt, call.channel.vars):
        call.refused_prompts.append(prompt)  # "Invalid Args": silent prompt, digits still read
    elif not M.file_opens(prompt, call.loaded_modules):
        return "_none_", {}  # the prompt cannot open: returns at once, nothing collected
    collected = ""
    terminated, terminator = False, ""
    presses = call.take_presses()
    if not presses:
        # nobody types: wait out the attempts (scaled down: timeouts are ms in the arg)
        if not call._sleep(min(timeout_ms / 1000.0 * tries, call.timing.playback * tries)):
            return "_none_", {}
    for digits, after, gap in presses:
        if not call._sleep(after):
            return "_none_", {}
        for digit in digits:
            call._dtmf(digit)
            if digit in terminators:
                terminated, terminator = True, digit
                break
            collected += digit
            if len(collected) >= max_digits:
                break
            if not call._sleep(gap):
                return "_none_", {}
        if terminated or len(collected) >= max_digits:
            break
    ok = bool(collected) and (regex is None or re.fullmatch(regex, collected) is not None)
    extra = {"read_result": "success" if ok else "failure"}
    if ok:
        extra[var] = collected
        call.channel.vars[var] = collected
    call.channel.vars["read_result"] = extra["read_result"]
    if terminated:  # switch_ivr_read sets it on a terminator and never clears it
        call.channel.vars["read_terminator_used"] = terminator
    if call.channel.vars.get("read_terminator_used"):  # every channel variable is on the event
        extra["read_terminator_used"] = call.channel.vars["read_terminator_used"]
    return "_none_", extra


def _ring(call: SimOutboundCall, arg: str, outcome: BridgeOutcome) -> BridgeOutcome:
    """A RingingPhone decides the outcome: answered, declined, killed (uuid_kill of the b-leg),
    NO_ANSWER after the bridge's leg_timeout, or the caller hanging up while it rings."""
    phone = outcome.phone
    b_uuid = outcome.b_leg_uuid or _origination_uuid(arg) or str(_uuid.uuid4())
    phone.b_leg_uuid = b_uuid
    killed = gevent.event.Event()
    call._bridge_kill[b_uuid] = killed
    match = re.search(r"leg_timeout=(\d+)", arg)
    deadline = time.monotonic() + (int(match.group(1)) if match else 60)
    phone.ringing.set()
    while not phone.decided.is_set() and time.monotonic() < deadline:
        if killed.is_set():
            phone._end(call._kill_cause.get(b_uuid, "NORMAL_CLEARING"), "")
        if call._interrupt.wait(0.01):
            phone._end("ORIGINATOR_CANCEL", "487")
    phone._end("NO_ANSWER", "480")
    call._bridge_kill.pop(b_uuid, None)
    if phone.cause is None:
        return BridgeOutcome(answer=True, talk=phone.talk, b_leg_uuid=b_uuid, leg=outcome.leg)
    return BridgeOutcome(answer=False, cause=phone.cause, sip_code=phone.sip_code)


def _app_bridge(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    outcome = call.next_bridge()
    phone = outcome.phone
    if phone is not None:
        outcome = _ring(call, arg, outcome)
    offer = bridged_leg_offer(call.channel.vars, call.scenario.codec)
    if outcome.answer and outcome.codecs and not set(offer) & set(outcome.codecs):
        # the callee answers 488: nothing it speaks was offered (no transcoding possible)
        outcome = BridgeOutcome(answer=False, cause="INCOMPATIBLE_DESTINATION", sip_code="488")
    ch = call.channel
    if not outcome.answer:
        call._sleep(call.timing.app_default)
        failure = {"originate_disposition": outcome.cause, "DIALSTATUS": outcome.cause,
                   "originate_failed_cause": outcome.cause, "last_bridge_hangup_cause": outcome.cause,
                   "last_bridge_proto_specific_hangup_cause": f"sip:{outcome.sip_code}"}
        ch.vars.update(failure)
        cont = ch.vars.get("continue_on_fail", "").lower()
        if not (cont in ("true", "yes", "1") or outcome.cause in cont.upper().split(",")):
            call._spawn_hangup(outcome.cause, "send_bye")
            call._interrupt.wait(1.0)
        return "_none_", {}
    b_uuid = outcome.b_leg_uuid or _origination_uuid(arg) or str(_uuid.uuid4())
    if ch.answer_state != "answered":
        # The callee answered: FreeSWITCH answers the still-ringing caller before bridging.
        ch.pre_answer()
        call.emit("CHANNEL_PROGRESS_MEDIA")
        ch.answer()
        call.emit("CHANNEL_ANSWER")
    kill = gevent.event.Event()
    call._bridge_kill[b_uuid] = kill
    if phone is not None:
        call.bridge_phones[b_uuid] = phone
        phone.talking = kill  # phone.hangup() ends the bridge from the phone's side
    tmpl = T.template("CHANNEL_BRIDGE")
    ch.other_leg = [(n, b_uuid if n == "Other-Leg-Unique-ID" else v) for n, v in tmpl.headers
                    if n.startswith("Other-Leg-") or n == "Other-Type"]
    ch.callee_id = (tmpl.get("Caller-Callee-ID-Name", ""), tmpl.get("Caller-Callee-ID-Number", ""))
    head = [("Bridge-A-Unique-ID", call.uuid), ("Bridge-B-Unique-ID", b_uuid)]
    bridged_us = int(time.time() * 1_000_000)  # FreeSWITCH stamps the caller's leg at each bridge
    ch.vars.update({"originate_disposition": "SUCCESS", "DIALSTATUS": "SUCCESS",
                    "bridge_uuid": b_uuid, "signal_bond": b_uuid, "last_bridge_to": b_uuid,
                    "bridge_epoch": str(bridged_us // 1_000_000), "bridge_uepoch": str(bridged_us)})
    ch.vars.update(bridge_exports(arg, outcome.leg))  # the answered leg's bridge_export_vars
    call.emit("CHANNEL_BRIDGE", head=head)
    if ch.vars.get("bridge_pre_execute_aleg_app") == "record_session":
        # run on the caller's leg once bridged (only record_session is modelled)
        _app_record_session(call, ch.vars.get("bridge_pre_execute_aleg_data", ""))
    deadline = time.monotonic() + outcome.talk
    while time.monotonic() < deadline and not kill.is_set():
        if call._interrupt.wait(min(0.01, max(0.0, deadline - time.monotonic()))):
            break
    call._bridge_kill.pop(b_uuid, None)
    if not call._interrupt.is_set():
        ch.vars.update({"bridge_hangup_cause": "NORMAL_CLEARING",
                        "last_bridge_hangup_cause": "NORMAL_CLEARING"})
        call.emit("CHANNEL_UNBRIDGE", head=head)
    return "_none_", {}


def _origination_uuid(arg: str) -> Optional[str]:
    m = re.search(r"origination_uuid=([0-9a-fA-F-]{36})", arg)
    return m.group(1) if m else None


def _app_record_session(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    if not call.channel.media:  # a ringing caller is pre-answered (183) by record_session
        call.channel.pre_answer()
        call.emit("CHANNEL_PROGRESS_MEDIA")
    path = arg.split()[0] if arg else ""
    call._recording = path
    call.emit("RECORD_START", tail=[("Record-File-Path", path)])
    return "_none_", {}


def _app_stop_record_session(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    if call._recording:
        call._record_stop()
    return "_none_", {}


def _conference_event(call: SimOutboundCall, action: str, name: str) -> None:
    key = f"conference::maintenance:{action}"
    head, tail = T.split_extras(key)
    conf_name = name.split("@", 1)[0]
    head = [(n, conf_name if n == "Conference-Name" else v) for n, v in head]
    call.emit("CUSTOM", subclass="conference::maintenance", key=key, head=head, tail=tail)


def _app_conference(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    transfer_room = consult.app_conference(call, arg)
    if transfer_room is not None:
        return transfer_room
    _conference_event(call, "add-member", arg)
    _conference_event(call, "floor-change", arg)
    call._interrupt.wait()
    _conference_event(call, "del-member", arg)
    return "_none_", {}


def _app_park(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    """Every simulated call is under socket control, and FreeSWITCH refuses to park those
    ("Cannot park channels that are under control already", switch_ivr.c): park returns at
    once, no CHANNEL_PARK."""
    log.error("Cannot park channels that are under control already.")
    return "_none_", {}


def _app_play_and_detect_speech(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    """``<file> detect:<engine> <grammar>``: the file is the raw text before ``detect:`` (a
    quoted prompt is not found: ERROR at once). The NLSML is the real switch's shape."""
    call.channel.vars["detect_speech_result"] = ""
    parts = M.split_detect_speech(arg)
    if parts is None:
        return "USAGE ERROR", {}
    prompt = parts[0]
    if M.say_refused(prompt, call.channel.vars):
        call.refused_prompts.append(prompt)
    elif not M.file_opens(prompt, call.loaded_modules):
        return "ERROR", {}
    _breakable_wait(call, call.timing.speak)
    if call._interrupt.is_set():
        return "_none_", {}
    speech = call.scenario.speech
    if speech:
        result = ('<?xml version="1.0"?>\n<result grammar="gather">\n'
                  '  <interpretation grammar="gather" confidence="92">\n'
                  f'    <input mode="speech">{speech}</input>\n  </interpretation>\n</result>\n')
    else:  # the no-input timeout (mod_pocketsphinx's NLSML, checked on the real switch)
        result = ('<?xml version="1.0"?>\n<result grammar="gather">\n  <interpretation>\n'
                  '    <input mode="speech"><noinput/></input>\n  </interpretation>\n</result>\n')
    call.channel.vars["detect_speech_result"] = result
    return "DONE", {"detect_speech_result": result}


def _app_amd(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    """mod_amd: blocks while it listens to the greeting, then sets amd_result and amd_cause
    (carried by the completion's variables, as on the real switch)."""
    _breakable_wait(call, call.scenario.amd_seconds)
    result, cause = call.scenario.greeting
    call.channel.vars.update({"amd_result": result, "amd_cause": cause})
    return "_none_", {"amd_result": result, "amd_cause": cause}


def _app_avmd_start(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    """mod_avmd: returns at once (a media bug); CUSTOM avmd::start now and avmd::beep (with
    Beep-Status, Frequency, Detection-time in microseconds) when the scenario's beep sounds."""
    call.emit("CUSTOM", subclass="avmd::start", with_vars=True)
    if call.scenario.beep_after is not None:
        call.avmd = gevent.spawn_later(call.scenario.beep_after, call.emit, "CUSTOM", subclass="avmd::beep",
                                       with_vars=True, tail=[
                                           ("Beep-Status", "DETECTED"), ("Frequency", "1053.215201"),
                                           ("Detection-time", str(int(call.scenario.beep_after * 1e6)))])
        call._greenlets.append(call.avmd)
    return "_none_", {}


def _app_avmd_stop(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    if call.avmd is not None:
        call.avmd.kill(block=False)
        call.avmd = None
    call.avmd_stopped = True
    return "_none_", {}


def _app_detect_silence(call: SimOutboundCall, arg: str) -> tuple[str, dict]:
    """mod_dptools' ``detect_silence <threshold> <hits> <timeout_ms>``: blocks until the line is
    quiet — the scenario's ``beep_rest`` (the rest of the machine's beep), or the timeout when
    that is longer — and says which in ``detect_silence_timeout``, as the real switch does."""
    parts = arg.split()
    if len(parts) < 3 or not all(p.isdigit() for p in parts[:3]):
        return "USAGE ERROR", {}
    timeout = int(parts[2]) / 1000
    _breakable_wait(call, min(call.scenario.beep_rest, timeout))
    timed_out = "true" if call.scenario.beep_rest >= timeout else "false"
    call.channel.vars["detect_silence_timeout"] = timed_out
    return "_none_", {"detect_silence_timeout": timed_out}


APP_BEHAVIOURS: dict[str, AppBehaviour] = {
    "amd": _app_amd,
    "avmd_start": _app_avmd_start,
    "avmd_stop": _app_avmd_stop,
    "detect_silence": _app_detect_silence,
    "answer": _app_answer,
    "pre_answer": _app_pre_answer,
    "playback": _app_playback,
    "speak": _app_speak,
    "sleep": _app_sleep,
    "set": _app_set,
    "export": _app_set,
    "unset": _app_unset,
    "hangup": _app_hangup,
    "play_and_get_digits": _app_play_and_get_digits,
    "bridge": _app_bridge,
    "record_session": _app_record_session,
    "stop_record_session": _app_stop_record_session,
    "conference": _app_conference,
    "park": _app_park,
    "play_and_detect_speech": _app_play_and_detect_speech,
}
