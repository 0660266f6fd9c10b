"""What a queued caller hears, measured on the real switch from the RTP it receives.

``CallerEar`` is the caller's audio port: a UDP socket the caller's SDP names
(``uac-wait-bye-listen.xml``, ``-key rtp_port``); each PCMU packet the switch sends is decoded
and laid on the timeline at its arrival time, so a stretch with no packets is silence too (what
the caller hears, not what the switch thinks it wrote). ``longest_silence`` finds the dead air
between the prompt and the hold music, and ``notes_at_once`` tells the test tree's
stepped tone (one pure tone at a time: 400, 440, 500, 520 Hz) from music (several notes).
"""
from __future__ import annotations

import io
import socket
import threading
import time
import wave
from pathlib import Path

import numpy as np
import soundfile as sf

from tests.realswitch.freeswitch import free_port

RATE = 8000
FRAME_SECONDS = 0.01
# a 10 ms frame below this RMS (of full scale) is silence: flite speech and the hold music are
# 100 times louder, a G.711 idle channel is below it
SILENCE_RMS = 0.003
_RTP_HEADER = 12


def ulaw_to_linear(codes: np.ndarray) -> np.ndarray:
    """G.711 mu-law codes → samples in [-1, 1)."""
    u = ~codes.astype(np.int32) & 0xFF
    magnitude = (((u & 0x0F) << 3) + 0x84) << ((u & 0x70) >> 4)
    return np.where(u & 0x80, 0x84 - magnitude, magnitude - 0x84) / 32768.0


class CallerEar:
    """A UDP port that keeps every PCMU RTP payload it receives with its arrival time."""

    def __init__(self) -> None:
        self.port = free_port(kind=socket.SOCK_DGRAM)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.settimeout(0.2)
        self.packets: list[tuple[float, bytes]] = []
        self.ssrcs: list[int] = []  # each packet's stream (one port may hear several calls)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "CallerEar":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(2048)
            except socket.timeout:
                continue
            except OSError:
                return
            if len(data) > _RTP_HEADER and data[1] & 0x7F == 0:  # PCMU (telephone-event skipped)
                csrc = data[0] & 0x0F
                self.packets.append((time.monotonic(), data[_RTP_HEADER + 4 * csrc:]))
                self.ssrcs.append(int.from_bytes(data[8:12], "big"))

    def streams(self) -> dict[int, list[tuple[float, bytes]]]:
        """SSRC → its packets, in order of each stream's first packet: the calls this port heard."""
        found: dict[int, list[tuple[float, bytes]]] = {}
        for ssrc, packet in zip(self.ssrcs, self.packets):
            found.setdefault(ssrc, []).append(packet)
        return found

    def heard(self, packets: list[tuple[float, bytes]] | None = None) -> tuple[np.ndarray, int]:
        """The caller's audio by arrival time from the first packet (gaps are silence); of
        ``packets`` (one of ``streams()``) when given."""
        packets = self.packets if packets is None else packets
        return heard(packets, packets[0][0] if packets else 0.0), RATE

    def loud_seconds(self, since: float, until: float, packets: list[tuple[float, bytes]] | None = None) -> float:
        """Seconds of sound (10 ms frames above ``SILENCE_RMS``) the caller heard between two
        ``time.monotonic()`` moments: whether, and how long, a party it was put through to spoke
        (of ``packets``, one of ``streams()``, when given)."""
        packets = self.packets if packets is None else packets
        audio, rate = self.heard(packets)
        if not len(audio):
            return 0.0
        t0 = packets[0][0]
        start, end = (max(0, int((moment - t0) * rate)) for moment in (since, until))
        return float((frame_levels(audio[start:end], rate) >= SILENCE_RMS).sum() * FRAME_SECONDS)


def heard(packets: list[tuple[float, bytes]], t0: float) -> np.ndarray:
    """PCMU payloads with their arrival times (any clock, ``t0`` on the same one) as the audio a
    listener heard from ``t0`` on: gaps are silence."""
    if not packets:
        return np.zeros(0)
    end = int((packets[-1][0] - t0) * RATE) + len(packets[-1][1])
    audio = np.zeros(max(end, 0))
    cursor = 0
    for at, payload in packets:
        # a packet lands at its arrival time, or right after the previous one when packets
        # came in a burst (jitter): what a jitter buffer would play
        start = max(int((at - t0) * RATE), cursor, 0)
        samples = ulaw_to_linear(np.frombuffer(payload, dtype=np.uint8))
        if start + len(samples) > len(audio):
            audio = np.concatenate([audio, np.zeros(start + len(samples) - len(audio))])
        audio[start:start + len(samples)] = samples
        cursor = start + len(samples)
    return audio


def frame_levels(audio: np.ndarray, rate: int) -> np.ndarray:
    size = int(rate * FRAME_SECONDS)
    frames = audio[: len(audio) // size * size].reshape(-1, size)
    return np.sqrt((frames ** 2).mean(axis=1))


def longest_silence(audio: np.ndarray, rate: int, *, after: float = 0.0) -> tuple[float, float]:
    """(start, seconds) of the longest silent stretch between the first and the last sound
    after ``after`` seconds: the dead air between the prompt and the music."""
    loud = frame_levels(audio, rate) >= SILENCE_RMS
    first = int(after / FRAME_SECONDS)
    idx = np.flatnonzero(loud[first:]) + first
    if len(idx) < 2:
        return (0.0, 0.0)
    best_start, best_len, run_start = 0, 0, None
    for i in range(idx[0], idx[-1] + 1):
        if not loud[i]:
            run_start = i if run_start is None else run_start
            if i - run_start + 1 > best_len:
                best_start, best_len = run_start, i - run_start + 1
        else:
            run_start = None
    return best_start * FRAME_SECONDS, best_len * FRAME_SECONDS


def notes_at_once(audio: np.ndarray, rate: int) -> int:
    """How many distinct frequencies (20 Hz apart) sound at once in a stretch with at least a
    quarter of the strongest one's amplitude: 1 for the stepped test tone, 2+ for chords."""
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(len(audio))))
    freqs = np.fft.rfftfreq(len(audio), 1 / rate)
    strongest = spectrum.max()
    found: list[float] = []
    for i in np.argsort(spectrum)[::-1]:
        if spectrum[i] < strongest / 4:
            break
        if all(abs(freqs[i] - f) > 20 for f in found):
            found.append(float(freqs[i]))
    return len(found)


def tone_file(hz: float, seconds: float, *, rate: int, file_format: str) -> bytes:
    """A file (``file_format`` as soundfile names it: "WAV", "MP3") of one steady tone at
    ``rate``: an upload whose sound is recognised by its frequency (``dominant_hz``) and whose
    length is known to the sample."""
    t = np.arange(int(rate * seconds)) / rate
    out = io.BytesIO()
    sf.write(out, 0.3 * np.sin(2 * np.pi * hz * t), rate, format=file_format)
    return out.getvalue()


def dominant_hz(audio: np.ndarray, rate: int) -> int:
    """The strongest frequency of a stretch, to the Hz: which tone a listener heard."""
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(len(audio))))
    return round(float(np.fft.rfftfreq(len(audio), 1 / rate)[spectrum.argmax()]))


TONE_BAND_HZ = 20.0  # a pure tone's power, through the Hann window, lies within this of its frequency


def tone_share(audio: np.ndarray, rate: int, hz: float) -> float:
    """The share (0-1) of a stretch's power within ``TONE_BAND_HZ`` of ``hz``: near 1 when a
    listener hears that tone alone, near 0 for speech or music without it. Tells a party that
    plays a known tone (a sip: target, an uploaded hold music) from anyone else it is mixed with."""
    power = np.abs(np.fft.rfft(audio * np.hanning(len(audio)))) ** 2
    freqs = np.fft.rfftfreq(len(audio), 1 / rate)
    total = power.sum()
    return float(power[np.abs(freqs - hz) <= TONE_BAND_HZ].sum() / total) if total else 0.0


def tone_mp3(hz: float, seconds: float) -> bytes:
    """An MP3 of one steady tone at 22.05 kHz (an upload for ``PUT /api/moh/:name``): nothing
    like the default's chords or the test tree's stepped tone, and converted by the upload
    (decoded, resampled, mono)."""
    return tone_file(hz, seconds, rate=22050, file_format="MP3")


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """A 16-bit mono WAV (``uuid_record``'s files) as samples in [-1, 1) and its rate."""
    with wave.open(str(path)) as wav:
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16).astype(float)
        return samples / 32768.0, wav.getframerate()


def timeline(audio: np.ndarray, rate: int) -> list[tuple[float, float, bool]]:
    """(start, seconds, loud) runs: what the caller heard, for failure messages."""
    loud = frame_levels(audio, rate) >= SILENCE_RMS
    runs: list[tuple[float, float, bool]] = []
    start = 0
    for i in range(1, len(loud) + 1):
        if i == len(loud) or loud[i] != loud[start]:
            runs.append((round(start * FRAME_SECONDS, 2), round((i - start) * FRAME_SECONDS, 2), bool(loud[start])))
            start = i
    return runs


MUSIC_MIN_SECONDS = 2.0  # the first sound this long without a break is the music


def music_gaps(audio: np.ndarray, rate: int) -> tuple[float, float, float]:
    """(silence before the music, the music's start, the longest silence after it started):
    the dead air after the last prompt, and breaks in the music (0 when none)."""
    runs = timeline(audio, rate)
    for i, (start, seconds, loud) in enumerate(runs):
        if loud and seconds >= MUSIC_MIN_SECONDS:
            before = runs[i - 1][1] if i > 0 and not runs[i - 1][2] else 0.0
            inner = [s for _, s, is_loud in runs[i + 1:-1] if not is_loud]  # the end: the hang-up
            return before, start, max(inner, default=0.0)
    raise AssertionError(f"no music heard: {runs}")
