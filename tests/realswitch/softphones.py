"""Real SIP softphones nobody here wrote, headless on loopback: Debian's baresip 1.0 (and
linphonec, below) as trunk callers and as agent phones, for the real-switch suite.

Why: sipp replays packets and cannot tell what a caller *hears*. A softphone decodes what it
receives, so a test can assert the figure a user cares about — received audio that is not
silence, as long as the call — and the phones' own SIP and RTP stacks meet the switch the way
customers' phones do.

baresip runs from its own temporary config folder (``baresip -f <dir>``) with a generated
``config`` and ``accounts``: modules ``g711`` (PCMU/PCMA), ``aufile`` (a WAV file is the
microphone), ``aubridge`` (a player that is no sound card), ``sndfile`` (writes what was sent and
received to ``dump-<time>-enc.wav`` / ``-dec.wav``), ``ctrl_tcp`` (JSON commands and events in
netstrings on a loopback TCP port) and ``menu`` (the commands: ``dial``, ``accept``, ``hangup``,
``sndcode`` = RFC 2833 DTMF). No ALSA/Pulse. SIP and RTP bind 127.0.0.1 only (``net_interface``)
on free ports; baresip also listens on TCP ``sip port + 1``, so both are picked free.

    farm = SoftphoneFarm(workdir)                       # or the ``softphones`` fixture
    caller = farm.baresip("caller", source=speech_wav(workdir, 20))
    caller.dial(f"sip:{number}@127.0.0.1:{switch.ports.sip}")
    caller.wait_established(); ...; caller.hangup(); caller.wait_closed()
    figures = measure_wav(caller.received_wav())      # seconds, rms_dbfs, active_seconds
    each_second = second_rms(caller.received_wav())   # a lost second shows as one low figure
    caller.log_matches(r"wraps backwards")            # what ctrl_tcp has no event for

    agent = farm.baresip("agent", account=BaresipAccount.agent(creds, switch.ports.agent_sip))
    agent.wait_registered()                             # answers offers by itself (auto)
    agent.send_dtmf("42#")                              # in a call
    farm.stop_all()                                     # the fixture does it at teardown
"""
from __future__ import annotations

import array
import contextlib
import json
import math
import os
import re
import shutil
import socket
import subprocess
import time
import uuid
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.plugins.eventually import eventually
from tests.plugins.skips import skip_or_fail_in_ci
from tests.realswitch.freeswitch import REPO, free_port
from tests.realswitch.rtp_pcap import SIPP_TALK_PCAP, alaw_to_linear, read_rtp_payloads

BARESIP_MODULES = Path("/usr/lib/baresip/modules")
SAMPLE_RATE = 8000
SILENCE_DBFS = -60.0     # a frame quieter than this is silence (G.711 idle noise is ~ -70 dBFS)
FRAME_SECONDS = 0.02
START_SECONDS = 15       # baresip answers ctrl_tcp within ~0.2 s; a loaded machine is slower
RTP_PORTS_PER_PHONE = 20
REGISTER_SECONDS = 300   # docs/agents.md's regint


def baresip_available() -> str | None:
    """None when Debian's baresip (with the modules used here) is installed, else why not."""
    if shutil.which("baresip") is None:
        return "baresip is not installed (scripts/install-system installs Debian's baresip)"
    missing = [m for m in ("g711", "aufile", "aubridge", "sndfile", "ctrl_tcp", "menu", "account")
               if not (BARESIP_MODULES / f"{m}.so").exists()]
    return f"baresip modules missing: {', '.join(missing)}" if missing else None


def _free_port_pair() -> int:
    """A port p with p and p+1 free (baresip's SIP on p, TCP/TLS on p+1)."""
    while True:
        port = free_port()
        try:
            with socket.socket() as tcp, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                tcp.bind(("127.0.0.1", port + 1))
                udp.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


def _free_rtp_ports(count: int = RTP_PORTS_PER_PHONE) -> tuple[int, int]:
    """``count`` consecutive even-started UDP ports free on loopback right now."""
    while True:
        start = free_port(kind=socket.SOCK_DGRAM) & ~1
        held = []
        try:
            for port in range(start, start + count):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                held.append(s)
                s.bind(("127.0.0.1", port))
            return start, start + count - 1
        except OSError:
            continue
        finally:
            for s in held:
                s.close()


# -- audio files --------------------------------------------------------------------------------

def write_wav(path: Path, samples: array.array, rate: int = SAMPLE_RATE) -> Path:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return path


def speech_wav(folder: Path, seconds: float, name: str = "speech") -> Path:
    """sip-tester's 7 s of speech (``g711a.pcap``, decoded) looped to ``seconds``: 8 kHz mono
    16-bit WAV, what a softphone's microphone says. Written at test time (no binary fixture)."""
    folder.mkdir(parents=True, exist_ok=True)
    alaw = b"".join(read_rtp_payloads(SIPP_TALK_PCAP))
    one = array.array("h", (alaw_to_linear(b) for b in alaw))
    wanted = int(seconds * SAMPLE_RATE)
    samples = array.array("h")
    while len(samples) < wanted:
        samples.extend(one[:wanted - len(samples)])
    return write_wav(folder / f"{name}-{seconds:g}s.wav", samples)


def tone_wav(folder: Path, seconds: float, hz: float = 440.0, dbfs: float = -12.0,
             name: str = "tone") -> Path:
    """A sine of ``hz`` at ``dbfs``: a microphone whose level is known exactly."""
    folder.mkdir(parents=True, exist_ok=True)
    amplitude = 32767 * 10 ** (dbfs / 20) * math.sqrt(2)
    samples = array.array("h", (int(amplitude * math.sin(2 * math.pi * hz * i / SAMPLE_RATE))
                                for i in range(int(seconds * SAMPLE_RATE))))
    return write_wav(folder / f"{name}-{hz:g}hz-{seconds:g}s.wav", samples)


def sweep_wav(folder: Path, seconds: int, name: str = "sweep") -> Path:
    """A 300-900 Hz sweep every second (amplitude 9000, ~ -14 dBFS): a microphone never silent
    for a whole second, so every second a listener got can be told from a lost one."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = array.array("h")
    for n in range(seconds * SAMPLE_RATE):
        t = (n % SAMPLE_RATE) / SAMPLE_RATE
        samples.append(int(9000 * math.sin(2 * math.pi * (300 * t + 300 * t * t))))
    return write_wav(folder / f"{name}-{seconds:g}s.wav", samples)


@dataclass(frozen=True)
class AudioFigures:
    """What a listener got: the file's length, its level, and how much of it was not silence."""
    seconds: float
    rms_dbfs: float          # over the whole file (-inf for digital silence)
    active_seconds: float    # 20 ms frames louder than SILENCE_DBFS
    last_active_second: float  # end of the last such frame (audio lasting to the end of a call)

    def __str__(self) -> str:
        return (f"{self.seconds:.2f} s, RMS {self.rms_dbfs:.1f} dBFS, "
                f"{self.active_seconds:.2f} s not silent (last at {self.last_active_second:.2f} s)")


def _dbfs(total_square: float, count: int) -> float:
    if count == 0 or total_square == 0:
        return -math.inf
    return 20 * math.log10(math.sqrt(total_square / count) / 32768)


def measure_wav(path: Path, channel: int | None = None, start: float = 0.0) -> AudioFigures:
    """Length, RMS and non-silent time of a 16-bit WAV (one ``channel`` of a stereo file, or
    all channels mixed as one stream of samples when None), from ``start`` seconds on (e.g.
    what a caller heard once an agent answered)."""
    with wave.open(str(path), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"{path}: {wav.getsampwidth() * 8}-bit samples, expected 16")
        channels, rate = wav.getnchannels(), wav.getframerate()
        samples = array.array("h", wav.readframes(wav.getnframes()))
    if channel is not None:
        samples = samples[channel::channels]
        channels = 1
    samples = samples[int(start * rate) * channels:]
    frame = int(rate * FRAME_SECONDS) * channels
    active = 0
    last = 0.0
    total = 0.0
    for i, start in enumerate(range(0, len(samples), frame)):
        chunk = samples[start:start + frame]
        square = float(sum(s * s for s in chunk))
        total += square
        if _dbfs(square, len(chunk)) > SILENCE_DBFS:
            active += 1
            last = (i + 1) * FRAME_SECONDS
    return AudioFigures(len(samples) / channels / rate, _dbfs(total, len(samples)),
                        active * FRAME_SECONDS, last)


def second_rms(path: Path) -> list[float]:
    """The int16 RMS of each whole second of a mono 16-bit WAV: a second that went missing or
    silent in a call shows as one low figure, where measure_wav's totals would hide it."""
    with wave.open(str(path), "rb") as wav:
        if wav.getsampwidth() != 2 or wav.getnchannels() != 1:
            raise ValueError(f"{path}: {wav.getnchannels()} channel(s) of {wav.getsampwidth() * 8}-bit "
                             "samples, expected mono 16-bit")
        rate = wav.getframerate()
        samples = array.array("h", wav.readframes(wav.getnframes()))
    return [math.sqrt(sum(s * s for s in samples[i:i + rate]) / rate)
            for i in range(0, len(samples) - rate + 1, rate)]


# -- baresip ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BaresipAccount:
    """One ``accounts`` line. ``registrar`` set: REGISTER with digest through the outbound proxy."""
    user: str
    domain: str = "127.0.0.1"
    password: str = ""
    outbound: str = ""       # sip:127.0.0.1:<port>: where every request goes (no DNS for domain)
    register: bool = False
    codecs: str = "PCMU,PCMA"
    answer: str = "auto"     # auto: answers offers at once (an agent phone); manual: ``accept()``

    @classmethod
    def caller(cls, user: str = "15550001") -> "BaresipAccount":
        """A trunk caller: no registration, ``From: <sip:user@127.0.0.1>`` (the trunk's IP)."""
        return cls(user)

    @classmethod
    def agent(cls, sip_username: str, sip_password: str, sip_domain: str,
              agent_port: int) -> "BaresipAccount":
        """An agent phone as docs/agents.md says: AOR ``<user>@<account subdomain>``, credentials
        from ``POST /api/agents/:id/sip-credentials``, outbound proxy = the agent profile."""
        return cls(sip_username, sip_domain, sip_password, f"sip:127.0.0.1:{agent_port}", True)

    def line(self) -> str:
        """The line docs/agents.md shows (baresip takes the AOR's user as the digest user)."""
        params = [f"answermode={self.answer}", f"audio_codecs={self.codecs}",
                  f"regint={REGISTER_SECONDS if self.register else 0}"]
        if self.password:
            params.append(f"auth_pass={self.password}")
        if self.outbound:
            params.append(f'outbound="{self.outbound}"')
        return f"<sip:{self.user}@{self.domain}>;" + ";".join(params)


def _netstring(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return str(len(body)).encode() + b":" + body + b","


class Baresip:
    """One headless baresip in ``folder``: commands over ``ctrl_tcp``, events collected from it."""

    def __init__(self, folder: Path, name: str, account: BaresipAccount, source: Path,
                 ip: str = "127.0.0.1", tls_ca: Path | None = None) -> None:
        self.folder = folder
        self.name = name
        self.account = account
        self.source = source
        self.ip = ip            # SIP and RTP bind here (127.0.0.2: a host outside the trunk ACL)
        # a development CA folder (scripts/dev-tls-cert's DEV_TLS_CA): the phone trusts it
        # (sip_cafile) and its own TLS listener gets a certificate from it (sip_certificate),
        # since a switch sends in-dialog requests (BYE) to the Contact's TLS port, checked
        self.tls_ca = tls_ca
        self.sip_port = _free_port_pair()
        self.ctrl_port = free_port()
        self.rtp_ports = _free_rtp_ports()
        self.events: list[dict] = []
        self.proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._buffer = b""
        self._responses: dict[str, dict] = {}

    @property
    def log_file(self) -> Path:
        return self.folder / "baresip.log"

    @property
    def uri(self) -> str:
        """Where to reach this phone directly (without registration)."""
        return f"sip:{self.account.user}@127.0.0.1:{self.sip_port}"

    def write_config(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        config = {
            "poll_method": "epoll",
            "sip_listen": f"{self.ip}:{self.sip_port}",
            "net_interface": self.ip,
            "rtp_ports": f"{self.rtp_ports[0]}-{self.rtp_ports[1]}",
            "audio_player": f"aubridge,{self.name}-{uuid.uuid4().hex[:6]}",
            "audio_alert": f"aubridge,{self.name}-alert",
            "audio_source": f"aufile,{self.source}",
            "ausrc_srate": SAMPLE_RATE, "auplay_srate": SAMPLE_RATE,
            "ausrc_channels": 1, "auplay_channels": 1,
            "module_path": BARESIP_MODULES,
            "ctrl_tcp_listen": f"127.0.0.1:{self.ctrl_port}",
            "snd_path": self.folder,
        }
        if self.tls_ca is not None:
            tls_dir = self.folder / "tls"
            subprocess.run(["bash", str(REPO / "scripts" / "dev-tls-cert"), str(tls_dir), self.ip], check=True,
                           capture_output=True, env={**os.environ, "DEV_TLS_CA": str(self.tls_ca)})
            config["sip_certificate"] = tls_dir / "agent.pem"
            config["sip_cafile"] = tls_dir / "cafile.pem"
        lines = [f"{key}\t{value}" for key, value in config.items()]
        lines += [f"module\t{m}.so" for m in ("g711", "aufile", "aubridge", "sndfile", "ctrl_tcp")]
        lines += [f"module_app\t{m}.so" for m in ("account", "menu")]
        (self.folder / "config").write_text("\n".join(lines) + "\n")
        (self.folder / "accounts").write_text(self.account.line() + "\n")

    def start(self) -> "Baresip":
        self.write_config()
        log = self.log_file.open("wb")
        self.proc = subprocess.Popen(["baresip", "-f", str(self.folder)], stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=str(self.folder))
        log.close()
        self._sock = eventually(self._connect, timeout=START_SECONDS,
                                what=f"baresip {self.name} control port {self.ctrl_port}")
        return self

    def _connect(self) -> socket.socket | None:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"baresip {self.name} exited ({self.proc.returncode}):\n"
                                 f"{self.log_text()}")
        try:
            sock = socket.create_connection(("127.0.0.1", self.ctrl_port), timeout=1)
        except OSError:
            return None
        sock.setblocking(False)
        return sock

    # -- control channel ----------------------------------------------------------------------

    def _pump(self) -> None:
        """Read what ctrl_tcp sent so far (events and command responses)."""
        assert self._sock is not None
        while True:
            try:
                data = self._sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            if not data:
                break
            self._buffer += data
        while b":" in self._buffer:
            length, _, rest = self._buffer.partition(b":")
            size = int(length)
            if len(rest) < size + 1:
                break
            message = json.loads(rest[:size])
            self._buffer = rest[size + 1:]
            if message.get("response"):
                self._responses[message.get("token", "")] = message
            elif message.get("event"):
                message["at"] = time.monotonic()
                self.events.append(message)

    def command(self, name: str, params: str = "", timeout: float = 10.0) -> dict:
        """Run a baresip command (as typed at its console: ``dial``, ``hangup``...); returns its
        response, failing when baresip says it did not work."""
        assert self._sock is not None, "baresip not started"
        token = uuid.uuid4().hex[:8]
        payload: dict[str, Any] = {"command": name, "token": token}
        if params:
            payload["params"] = params
        self._sock.setblocking(True)
        self._sock.sendall(_netstring(payload))
        self._sock.setblocking(False)

        def answered() -> dict | None:
            self._pump()
            return self._responses.pop(token, None)
        response = eventually(answered, timeout=timeout, what=f"baresip {self.name}: {name} answered")
        assert response.get("ok"), f"baresip {self.name}: {name} {params} → {response}"
        return response

    def event_types(self) -> list[str]:
        self._pump()
        return [e["type"] for e in self.events]

    def wait_event(self, kind: str, timeout: float = 15.0, after: int = 0) -> dict:
        """The first event of ``kind`` (``REGISTER_OK``, ``CALL_INCOMING``, ``CALL_ESTABLISHED``,
        ``CALL_CLOSED``...) among events from index ``after`` on."""
        def seen() -> dict | None:
            self._pump()
            return next((e for e in self.events[after:] if e["type"] == kind), None)
        return eventually(seen, timeout=timeout,
                          what=f"baresip {self.name}: {kind} (events so far: {self.event_types()})")

    # -- what a test does with a phone --------------------------------------------------------

    def dial(self, uri: str) -> None:
        self.command("dial", uri)

    def accept(self) -> None:
        self.command("accept")

    def hangup(self) -> None:
        self.command("hangup")

    def send_dtmf(self, digits: str, gap_seconds: float = 0.3) -> None:
        """Press ``digits`` in the current call (RFC 2833 events), ``gap_seconds`` apart — as a
        person keys them (a wait between presses is the thing being played, not a poll)."""
        for i, digit in enumerate(digits):
            if i:
                time.sleep(gap_seconds)
            self.command("sndcode", digit)

    def registered(self) -> bool:
        """baresip's ``reginfo`` shows the account ``OK`` (its REGISTER got a 200). Asked, not
        taken from REGISTER_OK: that event often fires before the control connection exists."""
        data = self.command("reginfo")["data"]
        return any(self.account.user in line and "OK" in line for line in data.splitlines())

    def wait_registered(self, timeout: float = 20.0) -> None:
        eventually(self.registered, timeout=timeout,
                   what=f"baresip {self.name} registered ({self.account.user}@{self.account.domain})")

    def wait_established(self, timeout: float = 20.0) -> dict:
        return self.wait_event("CALL_ESTABLISHED", timeout)

    def wait_closed(self, timeout: float = 30.0) -> dict:
        return self.wait_event("CALL_CLOSED", timeout)

    def call_seconds(self) -> float:
        """From CALL_ESTABLISHED to CALL_CLOSED of the first call (events' arrival times)."""
        start = self.wait_established(0.1)["at"]
        return self.wait_closed(0.1)["at"] - start

    def _dump(self, kind: str) -> Path:
        files = sorted(self.folder.glob(f"dump-*-{kind}.wav"), key=lambda p: p.stat().st_mtime)
        assert files, f"baresip {self.name} wrote no {kind} audio (no call had media?)"
        return files[-1]

    def received_wav(self) -> Path:
        """What this phone received and decoded in its last call (sndfile's ``-dec.wav``)."""
        return self._dump("dec")

    def sent_wav(self) -> Path:
        """What this phone sent in its last call (sndfile's ``-enc.wav``)."""
        return self._dump("enc")

    def _log_lines(self) -> list[str]:
        """The log's lines, split at carriage returns too (baresip repaints its call-status line)."""
        return self.log_file.read_text(errors="replace").splitlines() if self.log_file.exists() else []

    def log_text(self) -> str:
        """The log without the call-status line baresip repaints with carriage returns."""
        return "\n".join(line for line in self._log_lines() if "audio=" not in line)

    def log_matches(self, pattern: str) -> list[re.Match]:
        """``pattern`` searched in each log line (status lines included, so no message is
        missed), the matches in log order: what ctrl_tcp has no event for (``receiving from
        <address>``, ``rtp timestamp wraps backwards``...)."""
        return [m for line in self._log_lines() if (m := re.search(pattern, line))]

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            # a phone that no longer answers its control socket is terminated below anyway
            with contextlib.suppress(AssertionError, OSError):
                self.command("quit", timeout=3)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class SoftphoneFarm:
    """The softphones of one test, each in its own folder under ``workdir``; ``stop_all()`` at
    teardown, ``logs()`` for a failed test's report."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.phones: list[Any] = []

    def baresip(self, name: str, *, account: BaresipAccount | None = None,
                source: Path | None = None, ip: str = "127.0.0.1", tls_ca: Path | None = None) -> Baresip:
        """Start a baresip named ``name`` (a caller by default) whose microphone plays ``source``
        (default: 60 s of speech), on ``ip``; with ``tls_ca`` (the run's development CA) it
        speaks SIP over TLS (dial ``sip:...;transport=tls``). Skips (fails under CI=true)
        without Debian's baresip."""
        missing = baresip_available()
        if missing:
            skip_or_fail_in_ci(missing)
        folder = self.workdir / f"{name}-{uuid.uuid4().hex[:6]}"
        source = source or speech_wav(self.workdir, 60)
        phone = Baresip(folder, name, account or BaresipAccount.caller(), source, ip, tls_ca)
        self.phones.append(phone)
        return phone.start()

    def linphonec(self, name: str, *, user: str = "15550002",
                  source: Path | None = None) -> "Linphonec":
        """Start a linphonec caller ``user``@127.0.0.1 whose microphone plays ``source``.
        Skips (fails under CI=true) without Debian's linphone-cli."""
        missing = linphonec_available()
        if missing:
            skip_or_fail_in_ci(missing)
        folder = self.workdir / f"{name}-{uuid.uuid4().hex[:6]}"
        phone = Linphonec(folder, name, user, source or speech_wav(self.workdir, 60))
        self.phones.append(phone)
        return phone.start()

    def logs(self, lines: int = 80) -> list[tuple[str, str]]:
        return [(f"{phone.name} log (last {lines} lines)",
                 "\n".join(phone.log_text().splitlines()[-lines:])) for phone in self.phones]

    def stop_all(self) -> None:
        for phone in self.phones:
            phone.stop()


# -- linphonec ----------------------------------------------------------------------------------

def linphonec_available() -> str | None:
    if shutil.which("linphonec") is None:
        return "linphonec is not installed (scripts/install-system installs Debian's linphone-cli)"
    return None


class Linphonec:
    """One headless linphonec (Debian's ``linphone-cli``, liblinphone 5.1) in ``folder``: commands
    on its stdin, call states from its stdout. ``HOME`` is the folder, so its database
    (``.local/share/linphone``, which must exist or the core never starts listening) and
    history stay there. Audio is file based (``soundcard use files``): ``play`` makes a WAV the
    microphone, ``record`` writes what was received (8 kHz mono 16-bit) when the call ends.

    Config (``-c <folder>/linphonerc``): SIP on 127.0.0.1 UDP only, IPv6 off
    (``ipv6_migration_done=1`` keeps liblinphone from turning it back on), an RTP range of its
    own. liblinphone advertises the host's default-route IPv4 address for media (no setting
    makes it 127.0.0.1); that address is this host, so RTP still arrives.
    """

    def __init__(self, folder: Path, name: str, user: str, source: Path) -> None:
        self.folder = folder
        self.name = name
        self.user = user
        self.source = source
        self.sip_port = free_port()
        self.rtp_ports = _free_rtp_ports()
        self.proc: subprocess.Popen | None = None
        self.received = folder / "received.wav"

    @property
    def out_file(self) -> Path:
        return self.folder / "linphonec.out"

    @property
    def log_file(self) -> Path:
        return self.folder / "linphonec.log"

    def write_config(self) -> Path:
        (self.folder / ".local" / "share" / "linphone").mkdir(parents=True, exist_ok=True)
        rc = self.folder / "linphonerc"
        rc.write_text("\n".join([
            "[sip]", f"sip_port={self.sip_port}", "sip_tcp_port=0", "sip_tls_port=0",
            "use_ipv6=0", "ipv6_migration_done=1", "bind_address=127.0.0.1",
            f"contact=sip:{self.user}@127.0.0.1",
            "[rtp]", f"audio_rtp_port={self.rtp_ports[0]}-{self.rtp_ports[1]}",
            "[sound]", "echocancellation=0", ""]))
        return rc

    def start(self) -> "Linphonec":
        rc = self.write_config()
        out = self.out_file.open("wb")
        # stdbuf: linphonec's stdout is a file here, which stdio would flush only at exit
        self.proc = subprocess.Popen(
            ["stdbuf", "-oL", "linphonec", "-c", str(rc), "-d", "4", "-l", str(self.log_file)],
            stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, cwd=str(self.folder),
            env={"HOME": str(self.folder), "PATH": "/usr/bin:/bin"})
        out.close()
        eventually(lambda: "linphonec>" in self.output(), timeout=START_SECONDS,
                   what=f"linphonec {self.name} prompt")
        self.command("soundcard use files")
        self.command(f"play {self.source}")
        self.command(f"record {self.received}")
        return self

    def command(self, line: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None, "linphonec not started"
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def output(self) -> str:
        return self.out_file.read_text(errors="replace") if self.out_file.exists() else ""

    def dial(self, uri: str) -> None:
        self.command(f"call {uri}")

    def register(self, identity: str, proxy: str, password: str) -> None:
        """docs/agents.md's ``register <identity> <proxy> <password>``."""
        self.command(f"register {identity} {proxy} {password}")

    def wait_registered(self, timeout: float = 20.0) -> None:
        """liblinphone logged the account ``LinphoneRegistrationOk`` (linphonec itself prints
        nothing about it without ``-S``)."""
        def registered() -> bool:
            log = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
            return "to [LinphoneRegistrationOk]" in log
        eventually(registered, timeout=timeout, what=f"linphonec {self.name} registered")

    def hangup(self) -> None:
        self.command("terminate")

    def wait_connected(self, timeout: float = 20.0) -> None:
        eventually(lambda: " connected." in self.output(), timeout=timeout,
                   what=f"linphonec {self.name} call connected:\n{self.output()[-800:]}")

    def wait_ended(self, timeout: float = 30.0) -> None:
        """The call ended (``Call N ... ended``): the received WAV is complete once it has."""
        eventually(lambda: " ended" in self.output() or " error." in self.output(),
                   timeout=timeout, what=f"linphonec {self.name} call ended:\n{self.output()[-800:]}")

    def received_wav(self) -> Path:
        assert self.received.exists(), f"linphonec {self.name} recorded nothing"
        return self.received

    def log_text(self) -> str:
        log = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return self.output() + "\n" + log

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            # stdin already closed or the process gone: terminated below anyway
            with contextlib.suppress(OSError, ValueError):
                self.command("quit")
                self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
