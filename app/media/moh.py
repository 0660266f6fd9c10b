"""Hold music files: the shipped default, built offline, and where a queue's ``moh`` points.

The default (``moh: "default"``) is the product's own music, not a recording: a deterministic
synthesis (``default_music``) of a slow I–vi–IV–V progression in C (C, Am, F, G; 4 s a chord, a
16 s loop) of soft sine-based electric-piano voices (a fundamental with two quiet overtones,
each note a slow attack and a long exponential decay) over a quiet bass, at -18 dBFS peak. It is
written at controller start (``ensure_default``) as 8 kHz mono 16-bit PCM WAV, FreeSWITCH's
native rate for telephony, in ``<moh.dir>/default/``; nothing is downloaded. Being this
project's own work it is under the project's licence (MIT), royalty-free. ``python -m
app.media.moh OUT.wav`` writes it anywhere.

It is played as a file (``playback <path>``), not through mod_local_stream: a local_stream
directory pass ends with a 1 s pause (``read_stream_thread``: ``switch_yield(1000000)`` before
it reopens the directory), and the test tree's one-file stream was silent ~2 s in every 8 s.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import numpy as np
import soundfile as sf

from app.errors import ValidationFailed
from app.media.moh_uploads import uploaded_file

RATE = 8000
CHORD_SECONDS = 4.0
PEAK = 10 ** (-18 / 20)  # -18 dBFS: well under the prompts' level, no clipping after G.711
DEFAULT_NAME = "default"
DEFAULT_FILE = "sbc-hold-music-v1.wav"
# The other music the switch itself has: the local_stream directories of
# fs-conf/autoload_configs/local_stream.conf.xml besides ``default`` (which plays DEFAULT_FILE).
# A queue may name these, the default or an upload; any other name is no music at all (a
# missing local_stream plays nothing: the caller would wait in silence).
BUILT_IN_STREAMS = frozenset({"moh"})
BUILT_IN_NAMES = frozenset({DEFAULT_NAME}) | BUILT_IN_STREAMS
# C major I-vi-IV-V, MIDI notes (chord tones in the middle register, a bass note below)
PROGRESSION = (
    ((60, 64, 67), 48),  # C
    ((57, 60, 64), 45),  # Am
    ((53, 57, 60), 41),  # F
    ((55, 59, 62), 43),  # G
)


def _hz(note: int) -> float:
    return 440.0 * 2 ** ((note - 69) / 12)


def _voice(freq: float, seconds: float, *, attack: float, decay: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    tone = np.sin(2 * np.pi * freq * t) + 0.25 * np.sin(4 * np.pi * freq * t) + 0.08 * np.sin(6 * np.pi * freq * t)
    envelope = np.minimum(t / attack, 1.0) * np.exp(-t / decay)
    return tone * envelope


def default_music() -> np.ndarray:
    """The default hold music, samples in [-PEAK, PEAK] (deterministic: no randomness)."""
    chord_len = int(CHORD_SECONDS * RATE)
    out = np.zeros(chord_len * len(PROGRESSION))
    for i, (notes, bass) in enumerate(PROGRESSION):
        start = i * chord_len
        for k, note in enumerate(notes):  # a gentle arpeggio: each chord tone 0.25 s later
            offset = int(k * 0.25 * RATE)
            v = _voice(_hz(note), CHORD_SECONDS - k * 0.25, attack=0.04, decay=1.6)
            out[start + offset:start + offset + len(v)] += v
        for beat in (0.0, 2.0):  # the bass twice a chord
            v = _voice(_hz(bass), 2.0, attack=0.02, decay=0.9) * 0.8
            s = start + int(beat * RATE)
            out[s:s + len(v)] += v
    fade = int(0.02 * RATE)  # the loop's ends meet at zero: no click when it plays again
    out[:fade] *= np.linspace(0, 1, fade)
    out[-fade:] *= np.linspace(1, 0, fade)
    return out / np.abs(out).max() * PEAK


def write_default(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.wav")
    sf.write(str(tmp), default_music(), RATE, subtype="PCM_16")
    os.replace(tmp, path)  # FreeSWITCH never opens a half-written file
    return path


def ensure_default(moh_dir: str) -> Optional[Path]:
    """The default music file in ``moh_dir`` (written when missing); None when the directory
    cannot be written (the queue then plays ``local_stream://default``)."""
    path = Path(moh_dir) / DEFAULT_NAME / DEFAULT_FILE
    if path.is_file():
        return path
    try:
        return write_default(path)
    except OSError:
        return None


def require_known(moh_dir: str, account_id: str, moh: str) -> None:
    """A queue's ``moh`` must name music that plays: a built-in (BUILT_IN_NAMES) or a file the
    account itself uploaded (``/api/moh``). Checked when the queue is saved, so a typo is a 422
    to the admin instead of silence for every caller later; ``ValidationFailed`` (422
    ``unknown_moh``) otherwise."""
    if moh in BUILT_IN_NAMES or uploaded_file(moh_dir, account_id, moh) is not None:
        return
    raise ValidationFailed(
        f"No hold music is called {moh[:100]!r}: use {' or '.join(repr(n) for n in sorted(BUILT_IN_NAMES))}, "
        "or the name of a file uploaded with PUT /api/moh/:name (GET /api/moh lists them).",
        code="unknown_moh", details={"moh": moh[:100], "built_in": sorted(BUILT_IN_NAMES)})


class MusicLibrary:
    """Where a queue's ``moh`` points: the name of a file the account uploaded → that file
    (``<moh.dir>/<account>/<name>.wav``, the caller's own account only: app/media/moh_uploads.py),
    ``default`` → the shipped file (when it could be written), anything else →
    ``local_stream://<moh>`` (streams of local_stream.conf)."""

    def __init__(self, moh_dir: str) -> None:
        self.moh_dir = moh_dir
        self.default_file = ensure_default(moh_dir)

    def uploaded(self, account_id: str, name: str) -> Optional[str]:
        """The path of the file ``account_id`` itself uploaded as ``name`` (never another
        account's, never a built-in), None when it has none: a campaign's answering-machine
        message from the account's uploads, looked up when it plays."""
        path = uploaded_file(self.moh_dir, account_id, name)
        return str(path) if path is not None else None

    def source(self, account_id: str, moh: str) -> str:
        uploaded = uploaded_file(self.moh_dir, account_id, moh)  # looked up per wait: no stale cache
        if uploaded is not None:
            return str(uploaded)
        if moh == DEFAULT_NAME and self.default_file is not None:
            return str(self.default_file)
        return f"local_stream://{moh}"


if __name__ == "__main__":  # python -m app.media.moh OUT.wav
    print(write_default(Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_FILE)))
