"""A browser agent stays audible to a SIP trunk caller for the whole call (issue 27 item 2).

Chromium runs the SDK's example page (tests/sdk/browser.py; its fake microphone beeps twice a
second) and Debian's baresip calls a queue number over the trunk profile, sending a sweep and
dumping what it receives to a WAV (its ``sndfile`` module). The agent takes the call, they talk
for 30 s, the agent hangs up. tshark records the switch's RTP on loopback meanwhile.

What a user hears: every second of the bridged call reaches the caller at speech level, and the
caller reaches the browser every second. What broke it: FreeSWITCH copied the browser's RTP
timestamps (random base, jumps over its silences) into the caller's stream, and the browser's
comfort-noise silences reached the caller as no packets at all (docs/agents.md "Browser agents
and trunk callers"). So the caller's stream is also checked: its timestamps follow the clock.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
import wave
from pathlib import Path

import pytest

from tests.plugins.eventually import eventually
from tests.realswitch.freeswitch import free_port
from tests.realswitch.test_agent_sdk_browser import (  # noqa: F401  (example_server, web_queue: fixtures)
    PASSWORD,
    _web_agent,
    example_server,
    web_queue,
)
from tests.sdk.browser import BrowserAgent, missing_reason

CALL_SECONDS = 30
SPEECH_RMS = 300            # int16 RMS of a second with speech-level audio (~ -40 dBFS); silence is < 10
BROWSER_SPEECH_LEVEL = 0.01  # the same on WebRTC's 0..1 audio level scale
CLOCK_SLACK_S = 0.5         # how far the caller's RTP clock may stray from the wall clock per packet

_MISSING = missing_reason() or next((f"{tool} is not installed (bash scripts/install-system)"
                                     for tool in ("baresip", "tshark") if shutil.which(tool) is None), None)
if _MISSING and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI=true and the browser agent / baresip caller test cannot run: {_MISSING}")
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=f"browser agent / baresip test skipped: {_MISSING}")


def _sweep_wav(path: Path, seconds: int, rate: int = 8000) -> Path:
    """The caller's voice: a 300-900 Hz sweep every second, never silent."""
    frames = bytearray()
    for n in range(seconds * rate):
        t = (n % rate) / rate
        phase = 2 * math.pi * (300 * t + 300 * t * t)
        frames += int(9000 * math.sin(phase)).to_bytes(2, "little", signed=True)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(bytes(frames))
    return path


def _free_sip_port() -> int:
    """A loopback port free for UDP and TCP whose next port is free for TCP too: baresip listens
    for SIP/TLS on ``sip_listen``'s port + 1 and does not start when that one is taken."""
    while True:
        port = free_port()
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


class Baresip:
    """Debian's baresip 1.0 calling ``uri`` (a private helper of this test): it sends ``source``
    and its sndfile module dumps the decoded audio it receives to ``dump-*-dec.wav``; its log
    lines are kept with their arrival time."""

    def __init__(self, folder: Path, uri: str, source: Path) -> None:
        self.folder = folder
        (folder / "accounts").write_text("<sip:caller@127.0.0.1>;regint=0\n")
        (folder / "config").write_text("\n".join([
            f"sip_listen 127.0.0.1:{_free_sip_port()}",
            f"audio_source aufile,{source}",
            "audio_player aubridge,rx",   # plays nowhere: the sndfile dump is what we measure
            "audio_alert aubridge,alert",
            "module_path /usr/lib/baresip/modules",
            "module g711.so", "module aufile.so", "module aubridge.so", "module sndfile.so",
            "module_tmp account.so", "module_app menu.so",
            f"snd_path {folder}", ""]))
        self.lines: list[tuple[float, str]] = []
        self.log = open(folder / "baresip.log", "w")
        self.proc = subprocess.Popen(["baresip", "-f", str(folder), "-e", f"/dial {uri}"], cwd=folder,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, errors="replace")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip()))
            self.log.write(line)
            self.log.flush()

    def seen(self, pattern: str) -> tuple[float, re.Match] | None:
        """When a line matching ``pattern`` was printed (monotonic) and the match, or None."""
        for at, line in self.lines:
            if match := re.search(pattern, line):
                return at, match
        return None

    def count(self, pattern: str) -> int:
        return sum(1 for _, line in self.lines if re.search(pattern, line))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()

    def received_wav(self) -> Path:
        dumps = sorted(self.folder.glob("dump-*-dec.wav"))
        assert dumps, f"baresip dumped no received audio: {sorted(p.name for p in self.folder.iterdir())}"
        return dumps[-1]


class Capture:
    """tshark on loopback, UDP in the switch's RTP port range, to a pcap in the test's folder."""

    def __init__(self, path: Path, first_port: int, last_port: int) -> None:
        self.path = path
        self.stderr = open(path.with_suffix(".log"), "w")
        self.proc = subprocess.Popen(["tshark", "-q", "-i", "lo", "-f", f"udp portrange {first_port}-{last_port}",
                                      "-w", str(path)], stdout=subprocess.DEVNULL, stderr=self.stderr)
        eventually(lambda: "Capturing on" in path.with_suffix(".log").read_text() or self.proc.poll() is not None,
                   timeout=20, what="tshark capturing")
        assert self.proc.poll() is None, path.with_suffix(".log").read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.stderr.close()

    def rtp_from(self, port: int) -> list[tuple[float, int, int, int]]:
        """(arrival s, SSRC, sequence, timestamp) of the RTP sent from ``port`` to 127.0.0.1."""
        out = subprocess.run(["tshark", "-r", str(self.path), "-o", "rtp.heuristic_rtp:TRUE",
                              "-Y", f"udp.srcport == {port} && ip.dst == 127.0.0.1 && rtp.version == 2",
                              "-T", "fields", "-e", "frame.time_relative", "-e", "rtp.ssrc", "-e", "rtp.seq",
                              "-e", "rtp.timestamp"], capture_output=True, text=True, timeout=60)
        rows = [line.split("\t") for line in out.stdout.splitlines() if line.count("\t") == 3]
        return [(float(t), int(ssrc, 16), int(seq), int(ts)) for t, ssrc, seq, ts in rows]


def _second_rms(path: Path) -> list[float]:
    """The RMS of each whole second of a mono 16-bit WAV."""
    with wave.open(str(path)) as wav:
        rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
        samples = memoryview(wav.readframes(wav.getnframes())).cast("h")
    assert width == 2 and channels == 1, (width, channels)
    return [math.sqrt(sum(s * s for s in samples[i:i + rate]) / rate)
            for i in range(0, len(samples) - rate + 1, rate)]


def _clock_jumps(packets: list[tuple[float, int, int, int]], rate: int = 8000) -> list[str]:
    """Consecutive packets whose RTP timestamps moved more than CLOCK_SLACK_S away from the
    time between their arrivals (a timestamp taken from another stream, or a wrap)."""
    jumps = []
    for (t0, _s0, q0, ts0), (t1, _s1, q1, ts1) in zip(packets, packets[1:]):
        moved = ((ts1 - ts0 + 2**31) % 2**32 - 2**31) / rate
        if abs(moved - (t1 - t0)) > CLOCK_SLACK_S:
            jumps.append(f"seq {q0}->{q1} at {t1:.2f}s: ts {ts0}->{ts1} ({moved:+.1f}s of audio in {t1 - t0:.2f}s)")
    return jumps


def test_a_browser_agent_and_a_baresip_trunk_caller_hear_each_other_for_the_whole_30_s_call(
        tenant, real_switch, web_queue, example_server, realswitch_workdir):  # noqa: F811
    server, logdir = example_server
    folder = realswitch_workdir / f"baresip-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    name, _agent, sip = _web_agent(tenant, real_switch, web_queue["id"])
    number = tenant.number_for([{"verb": "queue", "name": web_queue["name"]}])
    browser = BrowserAgent(server.url(tenant.subdomain), name, PASSWORD, sip=sip,
                           wss_url=f"wss://127.0.0.1:{real_switch.ports.agent_wss}", logdir=logdir)
    caller = capture = None
    levels: list[float] = []
    try:
        browser.expect("ready", timeout=60)
        capture = Capture(folder / "rtp.pcap", real_switch.ports.rtp_start, real_switch.ports.rtp_end)
        caller = Baresip(folder, f"sip:{number}@127.0.0.1:{real_switch.ports.sip}",
                         _sweep_wav(folder / "caller.wav", CALL_SECONDS + 30))
        browser.command("take", "connected")
        bridged_at = time.monotonic()
        previous = browser.command("stats", "stats")["inbound"]
        while time.monotonic() - bridged_at < CALL_SECONDS:
            time.sleep(1)  # scenario: one second of talk, then the browser's audio energy of it
            now = browser.command("stats", "stats")["inbound"]
            span = now["totalSamplesDuration"] - previous["totalSamplesDuration"]
            levels.append(math.sqrt((now["totalAudioEnergy"] - previous["totalAudioEnergy"]) / span) if span else 0.0)
            previous = now
        browser.command("hangup", "ended")
        eventually(lambda: caller.seen(r"Call with .* terminated"), timeout=15, what="baresip got the agent's BYE")
    finally:
        browser.close()
        if caller:
            caller.stop()
        if capture:
            capture.stop()
    established = caller.seen(r"Call established")
    switch_port = caller.seen(r"receiving from 127\.0\.0\.1:(\d+)")
    assert established and switch_port, (folder / "baresip.log").read_text()[-2000:]
    rms = _second_rms(caller.received_wav())
    first = math.ceil(bridged_at - established[0]) + 1  # the dump starts at the answer (queue audio until the bridge)
    bridged = [round(r) for r in rms[first:first + CALL_SECONDS - 2]]
    packets = capture.rtp_from(int(switch_port[1][1]))
    jumps = _clock_jumps(packets)
    print(f"\ncaller: {len(rms)} s received, {len(packets)} RTP packets, bridged seconds' RMS {bridged}, "
          f"'wraps backwards' {caller.count('wraps backwards')}, clock jumps {jumps[:3]}\n"
          f"browser: caller's level each second {[round(v, 3) for v in levels]}\nfolder {folder}")
    assert not jumps, jumps                                 # the switch's own clock on the caller's stream
    assert caller.count("wraps backwards") == 0             # baresip dropped nothing
    assert len(bridged) == CALL_SECONDS - 2, f"the caller received {len(rms)} s of a {CALL_SECONDS} s call"
    assert min(bridged) > SPEECH_RMS, bridged               # the agent heard to the end
    assert len(levels) >= CALL_SECONDS and min(levels) > BROWSER_SPEECH_LEVEL, levels  # the caller too
