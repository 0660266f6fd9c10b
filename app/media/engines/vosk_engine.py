"""Vosk (Kaldi) with a model directory: the design card's offline engine. Any Vosk model
works (``transcription.vosk_model``); none is bundled for English (see README)."""
from __future__ import annotations

import json
import os

import numpy as np

from app import limits
from app.media.engines.base import Engine, ModelUnavailable, Segment

SETTING = "transcription.vosk_model"
CHUNK_SAMPLES = 4000  # 0.25 s at 16 kHz: how much audio the recogniser gets per call


def check_model_dir(path: str) -> None:
    if not path:
        raise ModelUnavailable(SETTING, "no model directory configured")
    if not os.path.isdir(path):
        raise ModelUnavailable(SETTING, f"{path} does not exist or is not a directory")
    if not os.path.isfile(os.path.join(path, "am", "final.mdl")):
        raise ModelUnavailable(SETTING, f"{path} is not a Vosk model (no am/final.mdl)")


class VoskEngine(Engine):
    name = "vosk"

    def __init__(self, model_path: str) -> None:
        check_model_dir(model_path)
        import vosk

        vosk.SetLogLevel(-1)
        try:
            self._model = vosk.Model(model_path)
        except Exception as exc:  # vosk raises a bare Exception("Failed to create a model")
            raise ModelUnavailable(SETTING, f"{model_path} could not be loaded: {exc}") from None
        self._vosk = vosk

    def transcribe(self, samples: np.ndarray) -> list[Segment]:
        """One segment per phrase the recogniser finalises (it ends phrases at pauses)."""
        recognizer = self._vosk.KaldiRecognizer(self._model, limits.MEDIA_ENGINE_SAMPLE_RATE)
        recognizer.SetWords(True)
        raw = samples.astype("<i2").tobytes()
        step = CHUNK_SAMPLES * 2
        phrases = []
        for offset in range(0, len(raw), step):
            if recognizer.AcceptWaveform(raw[offset:offset + step]):
                phrases.append(json.loads(recognizer.Result()))
        phrases.append(json.loads(recognizer.FinalResult()))
        segments = []
        for phrase in phrases:
            words = phrase.get("result") or []
            text = phrase.get("text", "").strip()
            if words and text:
                segments.append(Segment(round(words[0]["start"], 3), round(words[-1]["end"], 3), text))
        return segments
