"""Read a recording into per-channel sample arrays at the rate the engines want.

Why our own checks on top of libsndfile: libsndfile quietly shortens a WAV whose header
promises more data than the file holds, and an MP3 cut short decodes to its first frames. A
recording cut off like that (disk full, switch killed mid-call) must be reported as
``truncated``, not transcribed as if the call had been short.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np
import soundfile
import soxr

from app import limits

# Decoded MP3 length may differ from the Xing header by a frame's padding; more is a cut.
_MP3_TOLERANCE_FRAMES = 2304


class UnusableRecording(Exception):
    """The file cannot be transcribed, ever: ``reason`` is one of missing, empty, unreadable,
    truncated, too_long (``missing`` alone may be retried: the shared volume may lag)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Audio:
    """``channels``: one int16 array per channel, all at ``rate``."""
    channels: list[np.ndarray]
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.channels[0]) / self.rate if self.channels else 0.0


def _wav_declared_bytes(path: str) -> tuple[int, int] | None:
    """(offset, size) of the RIFF ``data`` chunk as the header declares it; None if absent."""
    with open(path, "rb") as fh:
        head = fh.read(12)
        if len(head) < 12 or head[:4] not in (b"RIFF", b"RIFX") or head[8:12] != b"WAVE":
            return None
        while True:
            chunk = fh.read(8)
            if len(chunk) < 8:
                return None
            cid, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if cid == b"data":
                return fh.tell(), size
            fh.seek(size + (size & 1), os.SEEK_CUR)


def _check_complete(path: str, fmt: str, declared_frames: int, decoded_frames: int) -> None:
    if fmt == "WAV":
        declared = _wav_declared_bytes(path)
        if declared is not None:
            offset, size = declared
            if offset + size > os.path.getsize(path):
                raise UnusableRecording(
                    "truncated", f"header declares {size} data bytes, file has "
                                 f"{os.path.getsize(path) - offset}")
    elif fmt == "MP3" and declared_frames - decoded_frames > _MP3_TOLERANCE_FRAMES:
        raise UnusableRecording("truncated", f"decoded {decoded_frames} of {declared_frames} frames")


def read_recording(path: str) -> Audio:
    """Decode a wav or mp3 file into int16 channels at the file's own rate.
    Raises ``UnusableRecording`` with the reason."""
    if not os.path.isfile(path):
        raise UnusableRecording("missing", path)
    if os.path.getsize(path) == 0:
        raise UnusableRecording("empty", "0 bytes")
    try:
        info = soundfile.info(path)
        if info.frames > limits.MEDIA_MAX_RECORDING_SECONDS * info.samplerate:
            raise UnusableRecording("too_long", f"{info.frames / info.samplerate:.0f} s")
        data, rate = soundfile.read(path, dtype="int16", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, ValueError) as exc:
        raise UnusableRecording("unreadable", str(exc)) from None
    if data.shape[0] == 0:
        raise UnusableRecording("empty", "no audio frames")
    _check_complete(path, info.format, info.frames, data.shape[0])
    return Audio([np.ascontiguousarray(data[:, c]) for c in range(data.shape[1])], rate)


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """int16 → int16 at ``to_rate`` (soxr, high quality): telephone audio is 8 kHz, the
    engines want 16 kHz."""
    if from_rate == to_rate:
        return samples
    return soxr.resample(samples, from_rate, to_rate)


def at_rate(audio: Audio, rate: int) -> Audio:
    return Audio([resample(c, audio.rate, rate) for c in audio.channels], rate)
