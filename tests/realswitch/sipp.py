"""sipp (Debian ``sip-tester``) as trunk callers and as carriers, against the real switch.

Scenarios live in ``scenarios/``; their ``[keyword]`` fields are filled with ``-key``. Every
run writes its error log next to the switch's work folder, so a refused call can be asserted
by its SIP status (``SippResult.refusal``) rather than by sipp's exit code alone.
"""
from __future__ import annotations

import re
import shutil
import socket
import subprocess
import uuid
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterator

from tests.plugins.eventually import eventually
from tests.realswitch.freeswitch import RealSwitch, free_port

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
CODECS = {"PCMU": 0, "PCMA": 8, "G729": 18, "G722": 9}
_UNEXPECTED = re.compile(r"received 'SIP/2\.0 (\d{3})")


_BLOCK = re.compile(r"^-{10,} (\d{4}-\d\d-\d\d[ \t]\d\d:\d\d:\d\d\.\d+)[^\n]*\n"
                    r"(?:UDP|TCP) message (sent|received)[^\n]*\n", re.MULTILINE)


def _messages(log: str):
    """(epoch, "sent"|"received", message text) from sipp's -trace_msg log."""
    blocks = list(_BLOCK.finditer(log))
    for i, match in enumerate(blocks):
        end = blocks[i + 1].start() if i + 1 < len(blocks) else len(log)
        stamp = datetime.strptime(match.group(1).replace("\t", " "), "%Y-%m-%d %H:%M:%S.%f")
        yield stamp.timestamp(), match.group(2), log[match.end():end].strip()


def _header(text: str, name: str) -> str:
    for line in text.splitlines():
        if line.lower().startswith(name.lower() + ":"):
            return line.split(":", 1)[1].strip()
    return ""


@dataclass
class SippResult:
    returncode: int
    stdout: str
    errors: str
    rtt_ms: list[float] = field(default_factory=list)
    messages: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def refusal(self) -> int | None:
        """The SIP status that ended the first refused call (403, 404, 503...), if any."""
        match = _UNEXPECTED.search(self.errors)
        return int(match.group(1)) if match else None

    def statuses(self) -> list[int]:
        return [int(code) for code in _UNEXPECTED.findall(self.errors)]

    def final_response_seconds(self) -> list[float]:
        """Per call (``trace_msg=True``): seconds from the first INVITE sent to the first final
        response received (200 or a refusal) — how long the caller heard ringing."""
        sent: dict[str, float] = {}
        answered: dict[str, float] = {}
        for stamp, direction, text in _messages(self.messages):
            call_id = _header(text, "Call-ID")
            first = text.split("\n", 1)[0]
            if direction == "sent" and first.startswith("INVITE"):
                sent.setdefault(call_id, stamp)
            elif direction == "received" and first.startswith("SIP/2.0 ") \
                    and first[8:11].isdigit() and int(first[8:11]) >= 200 and "INVITE" in _header(text, "CSeq"):
                answered.setdefault(call_id, stamp)
        return [answered[c] - sent[c] for c in sent if c in answered]


def codec_keys(codec: str) -> list[str]:
    return ["-key", "codec_pt", str(CODECS[codec]), "-key", "codec_name", codec]


class Sipp:
    def __init__(self, switch: RealSwitch, workdir: Path) -> None:
        self.switch = switch
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.exe = shutil.which("sipp") or "sipp"

    def _base(self, scenario: str, port: int, tag: str, ip: str = "127.0.0.1") -> list[str]:
        return [self.exe, "-sf", str(SCENARIOS / scenario), "-i", ip, "-p", str(port),
                "-mp", str(free_port(kind=socket.SOCK_DGRAM)),
                "-nostdin", "-trace_err", "-error_file", str(self.workdir / tag / "errors.log"),
                "-timeout_error"]

    def call(self, number: str, *, codec: str = "PCMU", caller: str = "15550001",
             calls: int = 1, rate: float = 10.0, limit: int | None = None,
             timeout: float = 90.0, trace_rtt: bool = False, trace_msg: bool = False,
             scenario: str = "uac-wait-bye.xml", source_ip: str = "127.0.0.1",
             extra: tuple[str, ...] = ()) -> SippResult:
        """Place ``calls`` calls to ``number`` at ``rate`` calls/s and wait for the run to end."""
        proc = self.start_calls(number, codec=codec, caller=caller, calls=calls, rate=rate,
                                limit=limit, trace_rtt=trace_rtt, trace_msg=trace_msg,
                                scenario=scenario, source_ip=source_ip, extra=extra)
        return proc.wait(timeout)

    def start_calls(self, number: str, *, codec: str = "PCMU", caller: str = "15550001",
                    calls: int = 1, rate: float = 10.0, limit: int | None = None,
                    trace_rtt: bool = False, trace_msg: bool = False,
                    scenario: str = "uac-wait-bye.xml",
                    source_ip: str = "127.0.0.1", extra: tuple[str, ...] = ()) -> "SippProcess":
        """Start callers in the background (``.wait()`` for the result)."""
        tag = f"uac-{uuid.uuid4().hex[:8]}"
        cmd = self._base(scenario, free_port(), tag, source_ip) + [
            "-s", number, "-m", str(calls), "-r", str(rate), "-rp", "1000",
            "-key", "caller", caller, *codec_keys(codec),
            "-timeout", "120s", "-max_recv_loops", "10000"]
        if limit:
            cmd += ["-l", str(limit)]
        if trace_rtt:  # sipp writes <scenario>_<pid>_rtt.csv into its working folder
            cmd += ["-trace_rtt", "-rtt_freq", "1"]
        if trace_msg:  # <scenario>_<pid>_messages.log
            cmd += ["-trace_msg"]
        cmd += [*extra, f"127.0.0.1:{self.switch.ports.sip}"]
        return SippProcess(cmd, self.workdir, tag).start()

    def carrier(self, *, scenario: str = "uas-answer.xml", codec: str = "PCMU",
                answer_delay_ms: int = 200, port: int | None = None,
                extra: tuple[str, ...] = (), ip: str = "127.0.0.1") -> "SippProcess":
        """A carrier/callee listening on ``ip``:``port`` until stopped (another loopback
        address, e.g. 127.0.0.2, is a host the switch was not told about)."""
        port = port or free_port()
        tag = f"uas-{ip}-{port}"
        cmd = self._base(scenario, port, tag, ip) + [
            *codec_keys(codec), "-d", str(answer_delay_ms), *extra]
        proc = SippProcess(cmd, self.workdir, tag).start()
        proc.port = port
        # listening before it is handed out: sipp binds its UDP port at start
        eventually(lambda: _udp_bound(port) or proc.proc.poll() is not None, timeout=10,
                   what=f"sipp carrier bound to udp/{port}")
        return proc


def _udp_bound(port: int) -> bool:
    """Some socket is bound to UDP ``port`` (the kernel's tables: sipp cannot be probed)."""
    wanted = f"{port:04X}"
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with suppress(OSError), open(table) as rows:
            next(rows)  # the header
            if any(row.split()[1].rpartition(":")[2] == wanted for row in rows):
                return True
    return False


@contextmanager
def answered_leg_in_socket(switch: RealSwitch, sipp: Sipp, socket_port: int,
                           user: str = "leg") -> Iterator[str]:
    """Originate a leg to a sipp callee that answers, hand it to ``socket(127.0.0.1:<port>
    async full)`` as FreeSWITCH's dialplan would, and yield its uuid (the callee stops after)."""
    callee = sipp.carrier()
    try:
        reply = switch.api(f"originate sofia/external/{user}@127.0.0.1:{callee.port} "
                           f"&socket('127.0.0.1:{socket_port} async full')", timeout=30)
        assert reply.startswith("+OK"), reply
        yield reply.split()[1]
    finally:
        callee.stop()


class SippProcess:
    def __init__(self, cmd: list[str], workdir: Path, tag: str) -> None:
        self.cmd = cmd
        self.workdir = workdir
        self.tag = tag
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def folder(self) -> Path:
        """This run's own working folder: its error log and rtt file."""
        return self.workdir / self.tag

    def start(self) -> "SippProcess":
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, cwd=str(self.folder))
        return self

    def wait(self, timeout: float = 90.0) -> SippResult:
        assert self.proc is not None
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        return self._result(out or "")

    def stop(self) -> SippResult:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.wait(10)

    def _result(self, out: str) -> SippResult:
        errors = ""
        err = self.folder / "errors.log"
        if err.exists():
            errors = err.read_text(errors="replace")
        rtt: list[float] = []
        for path in self.folder.glob("*_rtt.csv"):
            for line in path.read_text().splitlines()[1:]:
                parts = line.split(";")
                if len(parts) >= 2:
                    with suppress(ValueError):  # a truncated last line
                        rtt.append(float(parts[1]))
        messages = "".join(p.read_text(errors="replace")
                           for p in self.folder.glob("*_messages.log"))
        assert self.proc is not None
        return SippResult(self.proc.returncode, out, errors, rtt, messages)
