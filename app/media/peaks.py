"""A recording's waveform for the console's player: a short list of peaks read from the file.

Each peak is the loudest sample (over all channels) in one of ``count`` equal slices of the
recording, as a fraction of int16 full scale (0.0 silence, 1.0 full scale). The file is read
one slice at a time, so a long call never sits decoded in memory whole.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import soundfile

from app import limits
from app.media.audio import UnusableRecording

_FULL_SCALE = 32768.0


@dataclass(frozen=True)
class Peaks:
    peaks: list[float]
    duration_seconds: float


def read_peaks(path: str, count: int) -> Peaks:
    """``count`` peaks of the file (a slice shorter than one frame reads 0.0).
    Raises ``UnusableRecording`` (``unreadable``, ``too_long``)."""
    try:
        with soundfile.SoundFile(path) as audio:
            frames, rate = audio.frames, audio.samplerate
            if frames > limits.MEDIA_MAX_RECORDING_SECONDS * rate:
                raise UnusableRecording("too_long", f"{frames / rate:.0f} s")
            peaks = []
            for n in range(count):
                size = (n + 1) * frames // count - n * frames // count
                block = audio.read(size, dtype="int16", always_2d=True)
                loudest = int(np.abs(block.astype(np.int32)).max()) if block.size else 0
                peaks.append(round(loudest / _FULL_SCALE, 3))
    except (soundfile.LibsndfileError, RuntimeError, ValueError) as exc:
        raise UnusableRecording("unreadable", str(exc)) from None
    return Peaks(peaks, frames / rate if rate else 0.0)
