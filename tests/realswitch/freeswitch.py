"""The real FreeSWITCH of ``../shared/freeswitch``, run with the product's own ``fs-conf/``.

The configuration is copied unmodified (``fs-conf/`` plus the repository's ``dialplan/`` where
docker-compose mounts it); everything that differs per run — bind address, ports, ESL
password — is passed through the documented environment variables of ``fs-conf/vars.xml``.
That keeps the suite honest: what runs here is what an operator runs.

The shared tree was copied with its library symlinks flattened into small text files naming
their target (``libfreeswitch.so.1`` → "libfreeswitch.so.1.0.0"), which the dynamic loader
refuses ("file too short"). ``library_dir`` rebuilds the links in the run's own folder; the
tree itself is never written to.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Where the switch lies: a documented setting, else the sibling ``shared`` folder of the repo.
TREE_SETTING = "SBC_FREESWITCH_DIR"
WORK_FOLDERS = ("log", "db", "run", "certs", "recordings", "storage", "cache", "temp",
                "scripts", "htdocs", "fonts", "images")
# A real library is megabytes; a flattened symlink is its target's file name.
_FLATTENED_LINK_MAX_BYTES = 255
READY_TIMEOUT_SECONDS = 40.0


def freeswitch_tree() -> Path:
    return Path(os.environ.get(TREE_SETTING) or REPO.parent / "shared" / "freeswitch").resolve()


def missing_reason(tree: Path) -> str | None:
    """Why the real switch cannot run here (None when it can)."""
    if not (tree / "bin" / "freeswitch").is_file():
        return f"no FreeSWITCH at {tree} (set {TREE_SETTING})"
    if shutil.which("sipp") is None:
        return "sipp is not installed (Debian package sip-tester)"
    return None


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    """A port free for both TCP and UDP on loopback (SIP binds both)."""
    while True:
        with socket.socket(socket.AF_INET, kind) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        other = socket.SOCK_DGRAM if kind == socket.SOCK_STREAM else socket.SOCK_STREAM
        try:
            with socket.socket(socket.AF_INET, other) as probe:
                probe.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue


EPHEMERAL_PORTS_START = 32768
GDB_SECONDS = 120  # attaching and walking ~100 threads


_RTP_RANGES_GIVEN: list[tuple[int, int]] = []


def free_rtp_range(size: int = 2000) -> tuple[int, int]:
    """An even-aligned RTP range below the kernel's ephemeral ports (32768-60999 on Linux), so
    no client socket (sipp's signalling, a TCP connection) ever lands inside a switch's RTP
    range and into a capture of it. Ranges given in one run never overlap: a capture of the
    carrier switch's range once held the product switch's plain RTP to a caller (a CI run's
    SRTP assertion saw clear G.711); runs in parallel pick different ones at random."""
    import random
    while True:
        start = random.randrange(10000, EPHEMERAL_PORTS_START - size, 2)
        if all(start + size < first or start > last for first, last in _RTP_RANGES_GIVEN):
            _RTP_RANGES_GIVEN.append((start, start + size))
            return start, start + size


def library_dir(tree: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    for item in (tree / "lib").iterdir():
        target = item
        if item.stat().st_size <= _FLATTENED_LINK_MAX_BYTES:
            named = item.read_text().strip()
            if named and "/" not in named and (tree / "lib" / named).is_file():
                target = tree / "lib" / named
        link = into / item.name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return into


@dataclass(frozen=True)
class SwitchPorts:
    sip: int
    esl: int
    controller: int
    rtp_start: int
    rtp_end: int
    agent_sip: int = 0   # the internal (agent) profile: UDP/TCP, and WSS for browsers
    agent_wss: int = 0
    tls_sip: int = 0     # the trunk profile's SIP over TLS listener

    @classmethod
    def pick(cls) -> "SwitchPorts":
        start, end = free_rtp_range()
        return cls(sip=free_port(), esl=free_port(), controller=free_port(),
                   rtp_start=start, rtp_end=end, agent_sip=free_port(), agent_wss=free_port(),
                   tls_sip=free_port())


class RealSwitch:
    """One FreeSWITCH process in ``workdir``; ``api()`` runs an API command through fs_cli."""

    bind_ip = "127.0.0.1"

    def __init__(self, tree: Path, workdir: Path, ports: SwitchPorts, password: str,
                 ca_dir: Path | None = None) -> None:
        self.tree = tree
        self.workdir = workdir
        self.ports = ports
        self.password = password
        self.conf = workdir / "conf"
        self.log_file = workdir / "log" / "freeswitch.log"
        self.recordings = workdir / "recordings"
        self._lib = workdir / "lib"
        self.tls_dir = workdir / "tls"  # FS_TLS_CERT_DIR: scripts/dev-tls-cert's pair
        self.ca_dir = ca_dir  # the run's development CA (cafile.pem), shared with a carrier switch
        self.stuck: set[str] = set()  # channels even hupall did not end (quarantine)

    # configuration ---------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        """The variables fs-conf/vars.xml reads (docs/trunks.md "Environment")."""
        return {
            "FS_BIND_IP": self.bind_ip,
            "FS_SIP_PORT": str(self.ports.sip),
            "FS_ESL_PORT": str(self.ports.esl),
            "FS_ESL_PASSWORD": self.password,
            "SBC_CONTROLLER_HOST": "127.0.0.1",
            "SBC_CONTROLLER_PORT": str(self.ports.controller),
            "FS_RTP_START_PORT": str(self.ports.rtp_start),
            "FS_RTP_END_PORT": str(self.ports.rtp_end),
            "FS_AGENT_SIP_PORT": str(self.ports.agent_sip),
            "FS_AGENT_WSS_PORT": str(self.ports.agent_wss),
            "FS_TLS": "true",
            "FS_TLS_SIP_PORT": str(self.ports.tls_sip),
            "FS_TLS_CERT_DIR": str(self.tls_dir),
        }

    def install_config(self) -> None:
        """fs-conf/ as shipped, the repository's dialplan/ where compose mounts it."""
        if self.conf.exists():
            shutil.rmtree(self.conf)
        shutil.copytree(REPO / "fs-conf", self.conf)
        shutil.rmtree(self.conf / "dialplan")
        shutil.copytree(REPO / "dialplan", self.conf / "dialplan")
        for folder in WORK_FOLDERS:
            (self.workdir / folder).mkdir(parents=True, exist_ok=True)
        self.make_certificate()

    def make_certificate(self) -> None:
        """scripts/dev-tls-cert's pair in tls_dir, signed by the run's CA when there is one."""
        if (self.tls_dir / "agent.pem").exists():
            return
        env = dict(os.environ, DEV_TLS_CA=str(self.ca_dir)) if self.ca_dir else None
        subprocess.run(["bash", str(REPO / "scripts" / "dev-tls-cert"), str(self.tls_dir), self.bind_ip],
                       check=True, capture_output=True, env=env)

    @property
    def generated_dir(self) -> Path:
        return self.conf / "generated"

    # process ---------------------------------------------------------------------------
    def command(self) -> list[str]:
        """FreeSWITCH's command line: every folder in the work folder, modules from the tree."""
        w, t = self.workdir, self.tree
        return [str(t / "bin" / "freeswitch"), "-base", str(w), "-conf", str(self.conf),
                "-log", str(w / "log"), "-db", str(w / "db"), "-run", str(w / "run"),
                "-certs", str(w / "certs"), "-recordings", str(self.recordings),
                "-storage", str(w / "storage"), "-cache", str(w / "cache"),
                "-temp", str(w / "temp"), "-scripts", str(w / "scripts"),
                "-htdocs", str(w / "htdocs"), "-mod", str(t / "mod"),
                "-grammar", str(t / "grammar"), "-sounds", str(t / "sounds"),
                "-nc", "-nonat", "-nonatmap", "-ncwait"]

    def start(self) -> None:
        self.install_config()
        env = dict(os.environ, **self.environment(),
                   LD_LIBRARY_PATH=str(library_dir(self.tree, self._lib)))
        result = subprocess.run(self.command(), env=env, capture_output=True, text=True,
                                timeout=READY_TIMEOUT_SECONDS)
        if result.returncode != 0:
            raise RuntimeError(f"FreeSWITCH did not start ({result.returncode}): "
                               f"{result.stderr.strip()[-500:]}\n{self.log_tail()}")
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if "RUNNING" in self.api("sofia status", check=False):
                return
            time.sleep(0.2)
        raise RuntimeError(f"FreeSWITCH never reported the external profile\n{self.log_tail()}")

    def stop(self) -> None:
        pid = self.pid()
        self.api("fsctl shutdown", check=False)
        deadline = time.monotonic() + 20
        while pid and time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
        if pid:
            with contextlib.suppress(ProcessLookupError):  # it exited after all
                os.kill(pid, 9)

    def pid(self) -> int | None:
        try:
            return int((self.workdir / "run" / "freeswitch.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    # control ---------------------------------------------------------------------------
    def api(self, command: str, *, check: bool = True, timeout: float = 15.0) -> str:
        result = subprocess.run(
            [str(self.tree / "fs_cli"), "-H", "127.0.0.1", "-P", str(self.ports.esl),
             "-p", self.password, "-x", command],
            capture_output=True, text=True, timeout=timeout)
        out = result.stdout
        if check and (result.returncode != 0 or "Error Connecting" in result.stderr):
            raise RuntimeError(f"fs_cli {command!r} failed: {result.stderr.strip()}")
        return out

    def channel_uuids(self) -> set[str]:
        rows = json.loads(self.api("show channels as json") or "{}").get("rows") or []
        return {row["uuid"] for row in rows}

    def channel_count(self) -> int:
        """Live channels (``show channels count`` → "N total."), but for the stuck ones."""
        if self.stuck:
            return len(self.channel_uuids() - self.stuck)
        out = self.api("show channels count").strip()
        for word in out.split():
            if word.isdigit():
                return int(word)
        return 0

    def quarantine(self) -> Path:
        """Set the channels up now aside as stuck and write every switch thread's backtrace
        (gdb) next to the log; returns that file. Why: a channel that neither its BYE nor
        ``hupall`` ends (a session thread stuck inside the switch, seen once in CI: uuid_dump
        answered nothing) would fail every later test of the package that shares this switch;
        the test that left it fails, the later ones are judged on their own channels."""
        self.stuck |= self.channel_uuids()
        out = self.workdir / "log" / f"threads-{len(self.stuck)}.txt"
        pid = self.pid()
        if pid is None or shutil.which("gdb") is None:
            out.write_text(f"no backtrace: pid {pid}, gdb {shutil.which('gdb')}\n")
            return out
        with out.open("w") as sink:
            subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                           stdout=sink, stderr=subprocess.STDOUT, timeout=GDB_SECONDS, check=False)
        return out

    def wait_idle(self, timeout: float = 20.0) -> int:
        """Wait until the switch has no channel; returns the count left (0 when idle)."""
        deadline = time.monotonic() + timeout
        count = self.channel_count()
        while count and time.monotonic() < deadline:
            time.sleep(0.2)
            count = self.channel_count()
        return count

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no FreeSWITCH log)"

    def log_since(self, offset: int) -> str:
        with open(self.log_file, "rb") as fh:
            fh.seek(offset)
            return fh.read().decode(errors="replace")

    def log_offset(self) -> int:
        try:
            return self.log_file.stat().st_size
        except OSError:
            return 0
