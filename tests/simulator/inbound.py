"""Simulated inbound event socket (FreeSWITCH's port 8021), as in the inbound captures.

auth/request → ``auth`` → ``+OK accepted`` (wrong password: ``-ERR invalid`` then disconnect),
``event plain`` / ``filter`` / ``api`` / ``bgapi`` (+ BACKGROUND_JOB) / ``exit``. The server
keeps a channel table for ``show channels as json`` and ``uuid_kill``, and lets tests push
events (gateway state changes, hold/unhold, arbitrary CUSTOM) and drop every connection.
"""
from __future__ import annotations

import contextlib
import json
import socket as _socket
import time
import uuid as _uuid
from typing import Callable, Optional

import gevent
import gevent.event
import gevent.lock
from gevent.server import StreamServer

from app.routing.node_modules import contract_modules
from esl.protocol import encode_event_plain, parse_header_lines
from tests.simulator.channel import SimChannel, preamble
from tests.simulator.fsparse import Originate, dial_legs, originate_parts, separate_blank
from tests.simulator.outbound import GOODBYE, LIVE_CALLS, SimOutboundCall
from tests.simulator.scenario import Call

ORIGINATE_SYNTAX = ("<call url> <exten>|&<application_name>(<app_args>) [<dialplan>] [<context>] "
                    "[<cid_name>] [<cid_num>] [<timeout_sec>]")
SOCKET_APP_MAX_ARGS = 10  # mod_event_socket.c socket_function: char *argv[80], split on ' '

SHOW_CHANNELS_ROW_KEYS = (
    "uuid", "direction", "created", "created_epoch", "name", "state", "cid_name", "cid_num",
    "ip_addr", "dest", "application", "application_data", "dialplan", "context", "read_codec",
    "read_rate", "read_bit_rate", "write_codec", "write_rate", "write_bit_rate", "secure",
    "hostname", "presence_id", "presence_data", "accountcode", "callstate", "callee_name",
    "callee_num", "callee_direction", "call_uuid", "sent_callee_name", "sent_callee_num",
    "initial_cid_name", "initial_cid_num", "initial_ip_addr", "initial_dest", "initial_dialplan",
    "initial_context",
)


class _Client:
    def __init__(self, server: "InboundServer", sock: _socket.socket) -> None:
        self.server = server
        self.sock: Optional[_socket.socket] = sock
        self.lock = gevent.lock.RLock()
        self.authed = False
        self.events: set[str] = set()
        self.filters: list[tuple[str, str]] = []

    def write(self, data: bytes) -> None:
        with self.lock:
            if self.sock is None or self.server.frozen:  # a hung process sends nothing
                return
            try:
                self.sock.sendall(data)
            except OSError:
                self.close()

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            with contextlib.suppress(OSError):  # already reset by the peer: nothing left to close
                sock.close()

    def reply(self, text: str, extra: str = "") -> None:
        self.write(f"Content-Type: command/reply\nReply-Text: {text}\n{extra}\n".encode())

    def api_response(self, body: str) -> None:
        raw = body.encode()
        self.write(f"Content-Type: api/response\nContent-Length: {len(raw)}\n\n".encode() + raw)

    def wants(self, headers: list[tuple[str, str]]) -> bool:
        if not self.authed:
            return False
        first = {}
        for n, v in headers:
            first.setdefault(n, v)
        name, sub = first.get("Event-Name"), first.get("Event-Subclass")
        if not ("ALL" in self.events or name in self.events or (sub and sub in self.events)):
            return False
        if self.filters:
            return any(first.get(h) == v for h, v in self.filters)
        return True


class InboundServer:
    def __init__(self, password: str = "ClueCon", host: str = "127.0.0.1", port: int = 0) -> None:
        self.password = password
        self._server = StreamServer((host, port), self._handle)
        self.clients: list[_Client] = []
        self.commands: list[str] = []
        self.channels: dict[str, SimChannel] = {}
        self.gateways: dict[str, bool] = {}
        self.originate_fails: Optional[str] = None  # cause for the next originate, or None
        self.originates: list[str] = []             # every originate argument received
        # endpoint substring (e.g. a gateway name) -> the cause that leg fails with
        self.fail_legs: dict[str, str] = {}
        # FreeSWITCH destroys a failed leg's session a few ms after moving on (20 ms measured):
        # its uuid stays taken that long
        self.failed_leg_release_seconds = 0.05
        self._failed_uuids: dict[str, float] = {}
        self.on_originate: Optional[Callable[[Call], None]] = None  # shape the answered leg
        self.originated_calls: list[SimOutboundCall] = []
        self.bgapi_delay = 0.01
        self.refuse_connections = False
        self.loaded_modules: set[str] = set(contract_modules())  # answers ``module_exists``
        self._thawed = gevent.event.Event()  # cleared by freeze()
        self._thawed.set()
        self.api_delay = 0.0  # seconds before each api reply: a loaded switch
        # eavesdropper uuid -> {"target", "whisper_aleg", "whisper_bleg", "dtmf", "commands"}:
        # the legs originated into ``&eavesdrop(<uuid>)`` (supervisor listen/whisper/barge)
        self.eavesdrops: dict[str, dict] = {}

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def address(self) -> tuple[str, int]:
        return self._server.address[:2]

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        for call in self.originated_calls:
            call.kill()
        self.drop_connections()
        self._server.stop(timeout=1)

    def drop_connections(self) -> None:
        """Fault: close every client socket at once (FreeSWITCH restart / network blip)."""
        for client in list(self.clients):
            client.close()
        self.clients.clear()

    def freeze(self) -> None:
        """Fault: the process hangs with its sockets open — TCP stays up (new connections are
        still accepted by the kernel) but nothing is answered or sent until ``thaw()``. Freeze
        the node's calls too (``SimOutboundCall.freeze``). Commands wait in the socket and are
        answered in order after the thaw, as a process that resumes would."""
        self._thawed.clear()

    def thaw(self) -> None:
        self._thawed.set()

    @property
    def frozen(self) -> bool:
        return not self._thawed.is_set()

    # -- state helpers for tests ---------------------------------------------------------------
    def add_channel(self, caller: str = "15551230000", callee: str = "15557650000",
                    uuid: Optional[str] = None, answered: bool = True) -> SimChannel:
        ch = SimChannel(caller, callee, uuid)
        if answered:
            ch.answer()
        self.channels[ch.uuid] = ch
        return ch

    def emit(self, headers: list[tuple[str, str]], body: str = "") -> None:
        data = encode_event_plain(headers, body)
        for client in list(self.clients):
            if client.wants(headers):
                client.write(data)

    def emit_channel_event(self, ch: SimChannel, name: str, **kw) -> None:
        self.emit(ch.event_headers(name, **kw))

    def set_gateway(self, name: str, up: bool) -> None:
        """Gateway ping state change: emits sofia::gateway_state (only on change, like sofia)."""
        if self.gateways.get(name, True) == up:
            self.gateways[name] = up
            return
        self.gateways[name] = up
        tail = [("Gateway", name), ("State", "NOREG"), ("Ping-Status", "UP" if up else "DOWN"),
                ("Phrase", "OK" if up else "Service Unavailable"), ("Status", "200" if up else "503")]
        self.emit(preamble("CUSTOM", "sofia::gateway_state", "sofia::gateway_state") + tail)

    def hold(self, uuid: str) -> None:
        ch = self.channels[uuid]
        ch.hold()
        self.emit_channel_event(ch, "CHANNEL_CALLSTATE", tail=[("Original-Channel-Call-State", "ACTIVE")])
        self.emit_channel_event(ch, "CHANNEL_HOLD")

    def unhold(self, uuid: str) -> None:
        ch = self.channels[uuid]
        ch.unhold()
        self.emit_channel_event(ch, "CHANNEL_CALLSTATE", tail=[("Original-Channel-Call-State", "HELD")])
        self.emit_channel_event(ch, "CHANNEL_UNHOLD")
        ch.call_state = "ACTIVE"

    def _emit_leg_hold(self, args: list[str]) -> None:
        """As the switch does after ``uuid_hold [off] <uuid>`` on a leg: CHANNEL_HOLD or
        CHANNEL_UNHOLD of that leg, a moment later (the re-INVITE's answer)."""
        off = args[:1] == ["off"]
        leg = args[1] if off and len(args) > 1 else (args[0] if args else "")
        headers = preamble("CHANNEL_UNHOLD" if off else "CHANNEL_HOLD") + [("Unique-ID", leg)]
        gevent.spawn_later(0.02, self.emit, headers)

    def hangup_channel(self, uuid: str, cause: str = "NORMAL_CLEARING") -> None:
        ch = self.channels.pop(uuid)
        self.eavesdrops.pop(uuid, None)
        self._end_eavesdroppers_of(uuid)
        ch.hangup(cause, "send_bye")
        self.emit_channel_event(ch, "CHANNEL_HANGUP")
        ch.set_state("CS_REPORTING")
        ch.finalize_vars()
        self.emit_channel_event(ch, "CHANNEL_HANGUP_COMPLETE")
        self.emit_channel_event(ch, "CHANNEL_DESTROY")

    # -- protocol ------------------------------------------------------------------------------
    def _handle(self, sock: _socket.socket, address) -> None:
        if self.refuse_connections:
            sock.close()
            return
        client = _Client(self, sock)
        self.clients.append(client)
        self._thawed.wait()
        client.write(b"Content-Type: auth/request\n\n")
        buf = b""
        try:
            # a reset from the controller or a close from this side ends the session like EOF
            with contextlib.suppress(OSError):
                while client.sock is not None:
                    data = sock.recv(65536)
                    if not data:
                        break
                    buf += data
                    while b"\n\n" in buf:
                        head, buf = buf.split(b"\n\n", 1)
                        text = head.decode("utf-8", "replace")
                        line, _, hdrs = text.partition("\n")
                        self.commands.append(line)
                        self._thawed.wait()
                        self._command(client, line.strip(), dict(parse_header_lines(hdrs, decode=False)))
        finally:
            client.close()
            if client in self.clients:
                self.clients.remove(client)

    def _command(self, client: _Client, line: str, headers: dict[str, str]) -> None:
        word, _, rest = line.partition(" ")
        if not client.authed:
            if word == "auth" and rest == self.password:
                client.authed = True
                client.reply("+OK accepted")
            elif word == "auth":
                client.reply("-ERR invalid")
                client.write(b"Content-Type: text/disconnect-notice\nContent-Length: 67\n\n" + GOODBYE.encode())
                client.close()
            else:
                client.reply("-ERR command not found")
            return
        if word == "event":
            names = rest.split()
            if names and names[0] in ("plain", "json", "xml"):
                names = names[1:]
            client.events.update(names)
            client.reply("+OK event listener enabled plain")
        elif word == "filter":
            header, _, value = rest.partition(" ")
            client.filters.append((header, value))
            client.reply(f"+OK filter added. [{header}]=[{value}]")
        elif word == "api":
            if self.api_delay:
                gevent.sleep(self.api_delay)
            client.api_response(self._api(rest))
            if rest.strip() == "reloadacl":
                self.emit(preamble("RELOADXML"))
                self.emit(preamble("API") + [("API-Command", "reloadacl")])
        elif word == "bgapi":
            job = headers.get("Job-UUID") or str(_uuid.uuid4())
            client.reply(f"+OK Job-UUID: {job}", f"Job-UUID: {job}\n")
            gevent.spawn(self._bgapi, job, rest)
        elif word == "sendevent":
            client.reply(self._sendevent(rest.strip(), headers))
        elif word == "exit":
            client.reply("+OK bye")
            client.write(b"Content-Type: text/disconnect-notice\nContent-Length: 67\n\n" + GOODBYE.encode())
            client.close()
        else:
            client.reply("-ERR command not found")

    def _api(self, command: str) -> str:
        parts = command.split()
        verb, args = (parts[0], parts[1:]) if parts else ("", [])
        if command.strip() == "show channels as json":
            return self._show_channels()
        if verb == "uuid_kill" and args and args[0] in self.channels:
            gevent.spawn(self.hangup_channel, args[0], args[1] if len(args) > 1 else "NORMAL_CLEARING")
            return "+OK\n"
        if verb in ("uuid_kill", "uuid_hold", "uuid_send_dtmf"):
            # a channel of a simulated call (its own leg or a bridged b-leg), as on the switch
            for call in list(LIVE_CALLS):
                reply = call._api(command)
                if not reply.startswith("-ERR No such channel"):
                    if verb == "uuid_hold" and reply.startswith("+OK"):
                        self._emit_leg_hold(args)
                    return reply
            return "-ERR No such channel!\n"
        if verb == "reloadacl":
            return "+OK acl reloaded\n"
        if verb == "uuid_exists":
            return "true" if args and self.uuid_in_use(args[0]) else "false"
        if verb == "module_exists" and "mod_commands" in self.loaded_modules:
            # mod_commands' api: bare true/false, no newline; nothing without an argument
            return ("true" if args[0] in self.loaded_modules else "false") if args else ""
        if verb == "sofia" and args[:2] == ["status", "gateway"] and len(args) > 2:
            return self._gateway_status(args[2])
        # esl-captures/gateway_state: killgw only marks the gateway; rescan reloads the XML
        if verb == "sofia" and len(args) == 4 and args[0] == "profile" and args[2] == "killgw":
            return "+OK gateway marked for deletion.\n"
        if verb == "sofia" and len(args) == 3 and args[0] == "profile" and args[2] == "rescan":
            return "Reload XML [Success]\n+OK scan complete\n"
        if verb == "originate":
            return self._originate(" ".join(args))
        if verb == "status":
            return "UP 0 years, 0 days\nFreeSWITCH (Version 1.10.12-release) is ready\n"
        return f"-ERR {verb} Command not found!\n"

    def _show_channels(self) -> str:
        if not self.channels:
            return '{"row_count": 0}\n'
        rows = []
        for ch in self.channels.values():
            row = {k: "" for k in SHOW_CHANNELS_ROW_KEYS}
            row.update({
                "uuid": ch.uuid, "call_uuid": ch.uuid, "direction": "inbound",
                "created": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ch.created_us / 1e6)),
                "created_epoch": str(ch.created_us // 1_000_000), "name": ch.headers.get("Channel-Name", ""),
                "state": ch.state, "cid_name": ch.caller, "cid_num": ch.caller, "dest": ch.callee,
                "context": "public", "hostname": "vm", "callstate": ch.call_state,
                "read_codec": "PCMU", "read_rate": "8000", "read_bit_rate": "64000",
                "write_codec": "PCMU", "write_rate": "8000", "write_bit_rate": "64000",
                "initial_dest": ch.callee, "initial_context": "public",
                "application": ch.application, "application_data": ch.application_data,
            })
            rows.append(row)
        return json.dumps({"row_count": len(rows), "rows": rows}, separators=(",", ":"))

    def _gateway_status(self, name: str) -> str:
        if name not in self.gateways:
            return "Invalid Gateway!\n"
        up = self.gateways[name]
        return ("=" * 97 + "\n" + f"Name    \t{name}\nProfile \texternal\nState   \tNOREG\n"
                f"Status  \t{'UP' if up else 'DOWN'}\nPingState\t{'1/1/1' if up else '-1/-1/-1'}\n"
                + "=" * 97 + "\n")

    def _originate(self, arg: str) -> str:
        """mod_commands' originate: the argument is split as FreeSWITCH splits it
        (tests/simulator/fsparse.py), the ``|`` legs are tried in order with the global
        ``{}`` and per-leg ``[]`` variables, ``fail_on_single_reject`` stops the walk, and a
        leg whose ``origination_uuid`` is still held by an earlier leg fails like the switch's
        "Duplicate UUID!" (DESTINATION_OUT_OF_ORDER)."""
        self.originates.append(arg)
        if self.originate_fails:
            return f"-ERR {self.originate_fails}\n"
        parsed = originate_parts(arg)
        if parsed is None:
            return f"-USAGE: {ORIGINATE_SYNTAX}\n"
        global_vars, legs = dial_legs(parsed.dial_string)
        cause = "DESTINATION_OUT_OF_ORDER"
        for leg_vars, endpoint in legs:
            variables = {**global_vars, **leg_vars}
            uuid = variables.get("origination_uuid")
            if uuid and self.uuid_in_use(uuid):
                cause = "DESTINATION_OUT_OF_ORDER"  # no channel created: the walk goes on
                continue
            cause = next((c for key, c in self.fail_legs.items() if key in endpoint), "")
            if not cause:
                return self._answer_originate(parsed, variables, endpoint)
            if uuid:  # the failed leg's session is destroyed after the next leg starts
                self._failed_uuids[uuid] = time.monotonic() + self.failed_leg_release_seconds
            if _stops_walk(variables.get("fail_on_single_reject"), cause):
                break
        return f"-ERR {cause}\n"

    def uuid_in_use(self, uuid: str) -> bool:
        if uuid in self.channels:
            return True
        if any(c.uuid == uuid and not c.done.is_set() for c in self.originated_calls):
            return True
        return self._failed_uuids.get(uuid, 0.0) > time.monotonic()

    def _answer_originate(self, parsed: Originate, variables: dict[str, str], endpoint: str) -> str:
        """The answered leg runs ``&app(data)``; ``&socket(host:port [async] [full])`` dials
        the controller with exactly the flags FreeSWITCH read (a lost ``async full`` shows)."""
        if parsed.app == "socket" and parsed.app_data:
            words = separate_blank(parsed.app_data, SOCKET_APP_MAX_ARGS)
            host, _, port = words[0].rpartition(":")
            if host and port.isdigit():
                return self._originate_to_socket(variables, endpoint, host, int(port), tuple(words[1:]))
        ch = SimChannel("0000000000", "1001", variables.get("origination_uuid"))
        self.channels[ch.uuid] = ch
        self.emit_channel_event(ch, "CHANNEL_CREATE")
        ch.answer()
        self.emit_channel_event(ch, "CHANNEL_ANSWER")
        if parsed.app == "eavesdrop":
            self._eavesdrop(ch.uuid, (parsed.app_data or "").strip(), variables)
        return f"+OK {ch.uuid}\n"

    # -- eavesdrop (mod_dptools; switch_ivr_eavesdrop_session, FreeSWITCH 1.10.12) --------------
    def _eavesdrop(self, uuid: str, target: str, variables: dict[str, str]) -> None:
        """The answered leg runs ``eavesdrop(<target>)``. As on the real switch
        (tests/fixtures/esl_captures/realswitch_eavesdrop/notes.md): a target that does not exist
        makes eavesdrop return at once and the leg, with nothing left to run, hangs up
        NORMAL_CLEARING; otherwise it listens until the target or the leg itself goes away."""
        if not target or target == uuid or not self.uuid_in_use(target):
            gevent.spawn_later(0.02, self._hangup_if_up, uuid)
            return
        self.eavesdrops[uuid] = {
            "target": target, "commands": [],
            "whisper_aleg": _true(variables.get("eavesdrop_whisper_aleg")),
            "whisper_bleg": _true(variables.get("eavesdrop_whisper_bleg")),
            "dtmf": _true(variables.get("eavesdrop_enable_dtmf", "true")),
        }

    def eavesdrop_mode(self, uuid: str) -> Optional[str]:
        """listen / whisper (the eavesdropped leg's read: its bridged partner hears) /
        barge (both), from the start variables and the ``eavesdrop-command`` digits since."""
        state = self.eavesdrops.get(uuid)
        if state is None:
            return None
        read, write = state["whisper_aleg"], state["whisper_bleg"]
        for digit in "".join(state["commands"]):
            read, write = {"1": (True, False), "2": (False, True), "3": (True, True),
                           "0": (False, False)}.get(digit, (read, write))
        return {(False, False): "listen", (True, False): "whisper", (True, True): "barge",
                (False, True): "whisper-target"}[(read, write)]

    def _sendevent(self, name: str, headers: dict[str, str]) -> str:
        """mod_event_socket: with a ``Unique-ID`` of a live session the event is queued on
        that session (eavesdrop reads ``eavesdrop-command`` from it), else it is fired."""
        lowered = {k.lower(): v for k, v in headers.items()}
        target = lowered.get("unique-id")
        command = lowered.get("eavesdrop-command")
        if target in self.eavesdrops and command:
            self.eavesdrops[target]["commands"].append(command)
        return f"+OK {_uuid.uuid4()}"

    def _end_eavesdroppers_of(self, target: str) -> None:
        for uuid, state in list(self.eavesdrops.items()):
            if state["target"] == target:
                self.eavesdrops.pop(uuid, None)
                gevent.spawn_later(0.02, self._hangup_if_up, uuid)

    def _hangup_if_up(self, uuid: str) -> None:
        if uuid in self.channels:
            self.hangup_channel(uuid)

    def _originate_to_socket(self, variables: dict[str, str], endpoint: str, host: str, port: int,
                             socket_args: tuple[str, ...]) -> str:
        """Like FreeSWITCH: the global ``{}`` and the answered leg's ``[]`` variables land on
        the answered channel, whose destination is the dialled number; it then runs the socket app."""
        variables = dict(variables)
        number = endpoint.rsplit("/", 1)[-1].split("@", 1)[0]
        variables.setdefault("sofia_profile_name", "external")
        scenario = Call(caller=variables.get("origination_caller_id_number", "0000000000"),
                        callee=number, uuid=variables.get("origination_uuid"), variables=variables,
                        park_event=False, socket_args=socket_args)
        if self.on_originate is not None:
            self.on_originate(scenario)
        call = SimOutboundCall(scenario, (host, port))
        call.channel.answer()
        self.originated_calls.append(call.start())
        return f"+OK {call.uuid}\n"

    def _bgapi(self, job: str, command: str) -> None:
        gevent.sleep(self.bgapi_delay)
        verb, _, arg = command.partition(" ")
        body = self._api(command)
        headers = preamble("BACKGROUND_JOB") + [("Job-UUID", job), ("Job-Command", verb), ("Job-Command-Arg", arg)]
        self.emit(headers, body)


def _true(value: Optional[str]) -> bool:
    """switch_true()"""
    return (value or "").strip().lower() in ("true", "yes", "on", "1", "t", "y", "enabled", "active", "allow")


def _stops_walk(fail_on_single_reject: Optional[str], cause: str) -> bool:
    """switch_ivr_originate.c, between ``|`` legs: unless the value is true-ish (that form is
    about simultaneous ``,`` legs), the failed leg's cause name is looked up, case-insensitive,
    as a substring of the value (``!`` negates) and a hit ends the walk."""
    value = (fail_on_single_reject or "").strip()
    if not value or value.lower() in ("true", "yes", "on", "1", "t", "y", "enabled", "active", "allow"):
        return False
    found = cause.upper() in value.upper()
    return not found if value.startswith("!") else found
