"""tshark recording the switch's RTP on loopback, and the RTP header fields read back from it.

Why: a softphone's WAV says what a listener heard, not why a second went missing. The packets
on the wire do: their SSRC, sequence numbers and timestamps show a stream whose clock jumped or
that fell silent (docs/agents.md "Browser agents and trunk callers"). tshark is Debian's
(scripts/install-system); capturing on ``lo`` needs root or its capture permission.

    capture = RtpCapture(folder / "rtp.pcap", switch.ports.rtp_start, switch.ports.rtp_end)
    ...; capture.stop()
    packets = capture.rtp_from(switch_rtp_port)    # [(arrival epoch s, ssrc, seq, timestamp), ...]
"""
from __future__ import annotations

import shutil
import signal
import subprocess
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


class RtpCapture:
    """tshark on loopback, UDP in ``first_port``-``last_port`` (the switch's RTP range), to
    ``path``; started capturing when constructed, ``stop()`` flushes the file."""

    def __init__(self, path: Path, first_port: int, last_port: int) -> None:
        self.path = path
        self.log_file = path.with_suffix(".log")
        stderr = self.log_file.open("w")
        self.proc = subprocess.Popen(["tshark", "-q", "-i", "lo", "-f", f"udp portrange {first_port}-{last_port}",
                                      "-w", str(path)], stdout=subprocess.DEVNULL, stderr=stderr)
        stderr.close()
        eventually(lambda: "Capturing on" in self.log_file.read_text() or self.proc.poll() is not None,
                   timeout=START_SECONDS, what="tshark capturing")
        assert self.proc.poll() is None, self.log_file.read_text()

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
        out = subprocess.run(["tshark", "-r", str(self.path), "-o", "rtp.heuristic_rtp:TRUE",
                              "-Y", f"udp.srcport == {port} && ip.dst == 127.0.0.1 && rtp.version == 2",
                              "-T", "fields", "-e", "frame.time_epoch", "-e", "rtp.ssrc", "-e", "rtp.seq",
                              "-e", "rtp.timestamp"], capture_output=True, text=True, timeout=READ_SECONDS)
        rows = [line.split("\t") for line in out.stdout.splitlines() if line.count("\t") == 3]
        return [(float(t), int(ssrc, 16), int(seq), int(ts)) for t, ssrc, seq, ts in rows]
