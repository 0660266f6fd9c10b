"""tshark recording the switch's RTP on loopback, and the RTP header fields read back from it.

Why: a softphone's WAV says what a listener heard, not why a second went missing. The packets
on the wire do: their SSRC, sequence numbers and timestamps show a stream whose clock jumped or
that fell silent (docs/agents.md "Browser agents and trunk callers"). tshark is Debian's
(scripts/install-system); capturing on ``lo`` needs root or its capture permission.

    capture = RtpCapture(folder / "rtp.pcap", switch.ports.rtp_start, switch.ports.rtp_end)
    ...; capture.stop()
    packets = capture.rtp_from(switch_rtp_port)    # [(arrival epoch s, ssrc, seq, timestamp), ...]

``also_ports`` adds signalling ports (TCP or UDP) to the same capture: the carrier's SIP and
SIP-over-TLS listeners, so one pcap shows the TLS handshake and the SRTP of one call
(test_carrier_on_the_internet.py); ``tls_handshakes``, ``frames_matching`` and ``rtp_payloads``
(of any pcap) read them back.
"""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import uuid
from pathlib import Path

from tests.plugins.eventually import eventually

START_SECONDS = 20       # tshark prints "Capturing on 'Loopback'" within ~1 s; a loaded machine is slower
STOP_SECONDS = 15        # it writes the rest of the pcap on SIGINT
READ_SECONDS = 60

RtpPacket = tuple[float, int, int, int]  # arrival (epoch seconds, the kernel's), SSRC, sequence, timestamp


def tshark_available() -> str | None:
    """None when tshark is installed, else why not."""
    if shutil.which("tshark") is None:
        return "tshark is not installed (bash scripts/install-system)"
    return None


def _fields(path: Path, display_filter: str, *fields: str, decode_as: tuple[str, ...] = ()) -> list[list[str]]:
    """One row of ``fields`` per frame of the pcap at ``path`` matching ``display_filter``."""
    args = ["tshark", "-r", str(path), "-o", "rtp.heuristic_rtp:TRUE", "-Y", display_filter]
    for rule in decode_as:
        args += ["-d", rule]
    for field in fields:
        args += ["-e", field]
    out = subprocess.run([*args, "-T", "fields"], capture_output=True, text=True, timeout=READ_SECONDS)
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    return [row for row in rows if len(row) == len(fields)]


def rtp_payloads(path: Path, between: tuple[int, int] | None = None) -> list[tuple[int, bytes]]:
    """(payload type, payload bytes) of every RTP packet of the pcap at ``path``, in order;
    with ``between`` only the packets of the stream between those two UDP ports (both ways).
    tshark reads an SRTP packet as RTP (its header is clear): the payload then ends with the
    auth tag."""
    display_filter = "rtp.version == 2"
    if between:
        display_filter += " && udp.port == {} && udp.port == {}".format(*between)
    rows = _fields(path, display_filter, "rtp.p_type", "rtp.payload")
    return [(int(pt), bytes.fromhex(payload.replace(":", ""))) for pt, payload in rows]


class RtpCapture:
    """tshark on loopback, UDP in ``first_port``-``last_port`` (the switch's RTP range), to
    ``path``; started capturing when constructed, ``stop()`` flushes the file."""

    def __init__(self, path: Path, first_port: int, last_port: int, also_ports: tuple[int, ...] = ()) -> None:
        self.path = path
        self.log_file = path.with_suffix(".log")
        stderr = self.log_file.open("w")
        bpf = " or ".join([f"udp portrange {first_port}-{last_port}", *(f"port {p}" for p in also_ports)])
        self.proc = subprocess.Popen(["tshark", "-q", "-i", "lo", "-f", bpf,
                                      "-w", str(path)], stdout=subprocess.DEVNULL, stderr=stderr)
        stderr.close()
        eventually(lambda: "Capturing on" in self.log_file.read_text() or self.proc.poll() is not None,
                   timeout=START_SECONDS, what="tshark capturing")
        assert self.proc.poll() is None, self.log_file.read_text()

    def wait_live(self, probe_port: int) -> None:
        """Return once a UDP probe sent to 127.0.0.1:``probe_port`` (a captured port with no
        listener) is in the file. "Capturing on" is printed before the capture is live: on a
        loaded machine a TLS handshake right after it was missing from the pcap (measured)."""
        marker = f"sbc-capture-probe-{uuid.uuid4().hex}".encode()

        def probed() -> bool:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.sendto(marker, ("127.0.0.1", probe_port))
            return self.frames_matching(f'frame contains "{marker.decode()}"') > 0
        eventually(probed, timeout=START_SECONDS, interval=0.5, what="tshark captured the probe")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def rtp_from(self, port: int) -> list[RtpPacket]:
        """The RTP sent from ``port`` to 127.0.0.1, in capture order."""
        rows = _fields(self.path, f"udp.srcport == {port} && ip.dst == 127.0.0.1 && rtp.version == 2",
                            "frame.time_epoch", "rtp.ssrc", "rtp.seq", "rtp.timestamp")
        return [(float(t), int(ssrc, 16), int(seq), int(ts)) for t, ssrc, seq, ts in rows]

    def audio_from(self, port: int, payload_type: int = 0) -> list[tuple[float, bytes]]:
        """(arrival epoch s, payload) of each packet of ``payload_type`` (0 PCMU, 8 PCMA) sent
        from ``port``: what the party at the other end received, for ``hold_audio.heard``."""
        rows = _fields(self.path, f"udp.srcport == {port} && rtp.version == 2 && rtp.p_type == {payload_type}",
                       "frame.time_epoch", "rtp.payload")
        return [(float(t), bytes.fromhex(payload.replace(":", ""))) for t, payload in rows]

    def first_to(self, port: int) -> float | None:
        """Arrival (epoch s) of the first RTP packet sent to ``port``: when the far end began to
        send (a callee that plays a file from its answer)."""
        rows = _fields(self.path, f"udp.dstport == {port} && rtp.version == 2", "frame.time_epoch")
        return float(rows[0][0]) if rows else None

    def tls_handshakes(self, port: int) -> list[tuple[int, int, int]]:
        """(source port, destination port, handshake type) of the TLS handshake records to or
        from TCP ``port``: 1 is a ClientHello, 2 a ServerHello."""
        rows = _fields(self.path, f"tcp.port == {port} && tls.handshake.type", "tcp.srcport", "tcp.dstport",
                            "tls.handshake.type", decode_as=(f"tcp.port=={port},tls",))
        return [(int(src), int(dst), int(kind.split(",")[0])) for src, dst, kind in rows]

    def frames_matching(self, display_filter: str) -> int:
        """How many frames of the pcap match ``display_filter``."""
        return len(_fields(self.path, display_filter, "frame.number"))
