"""OpenAI Whisper through whisper.cpp (``pywhispercpp`` wheel) with a ggml model file,
quantised or not: the most accurate engine here.

Why pywhispercpp and not the design card's ``whisper-cpp-python``: the latter is unmaintained
since 2023, has no wheel (compiles whisper.cpp at install time) and cannot read quantised
models (README, "Media pipeline")."""
from __future__ import annotations

import math
import os

import numpy as np

from app import limits
from app.media.engines.base import Engine, ModelUnavailable, Segment, to_float

SETTING = "transcription.whisper_model"
GGML_MAGIC = b"lmgg"  # 0x67676d6c little-endian: every whisper.cpp model file starts with it
# Whisper's encoder always works on a 30 s window (1500 frames of 20 ms). Utterances are a few
# seconds, so the window is cut to the utterance plus this margin (``audio_ctx``): the encoder's
# work shrinks in proportion — 4 to 18 times faster on the test sentences, same words.
FULL_WINDOW_FRAMES = 1500
FRAMES_PER_SECOND = 50
WINDOW_MARGIN_FRAMES = 64


def check_model_file(path: str) -> None:
    """whisper.cpp "loads" a file that is not a model without an error and crashes later, and
    pywhispercpp treats a path that does not exist as a model *name* to download: so the file
    is checked here first."""
    if not path:
        raise ModelUnavailable(SETTING, "no model file configured (path of a ggml .bin file)")
    if not os.path.isfile(path):
        raise ModelUnavailable(SETTING, f"{path} does not exist or is not a file")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelUnavailable(SETTING, f"{path} cannot be read ({exc.strerror})") from None
    if magic != GGML_MAGIC:
        raise ModelUnavailable(SETTING, f"{path} is not a whisper.cpp ggml model")


class WhisperEngine(Engine):
    name = "whisper"

    def __init__(self, model_path: str, *, threads: int = 2) -> None:
        check_model_file(model_path)
        from pywhispercpp.model import Model  # loads the native library only when chosen

        self._model = Model(model_path, n_threads=threads, print_progress=False,
                            print_realtime=False, print_timestamps=False,
                            redirect_whispercpp_logs_to=None, language="en")

    def transcribe(self, samples: np.ndarray) -> list[Segment]:
        seconds = len(samples) / limits.MEDIA_ENGINE_SAMPLE_RATE
        window = min(FULL_WINDOW_FRAMES, math.ceil(seconds * FRAMES_PER_SECOND) + WINDOW_MARGIN_FRAMES)
        # t0/t1 are whisper.cpp's 10 ms ticks; with a cut window the last end can overshoot
        return [Segment(min(s.t0 / 100.0, seconds), min(s.t1 / 100.0, seconds), s.text.strip())
                for s in self._model.transcribe(to_float(samples), audio_ctx=window) if s.text.strip()]
