"""The one interface every speech-to-text engine implements.

An engine is loaded once per worker process (models are large: load time and memory are paid
at start-up, never per job) and then given one channel at a time: mono int16 samples at
``limits.MEDIA_ENGINE_SAMPLE_RATE``. It returns timed segments; splitting stereo into speakers
and merging by time is the caller's job (``app.media.transcribe``), so engines stay small.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Segment:
    """``start``/``end`` in seconds from the beginning of the channel."""
    start: float
    end: float
    text: str


class ModelUnavailable(Exception):
    """The configured model cannot be used. Names the ``cluster_config`` setting to fix, so
    the start-up error tells the operator what to change."""

    def __init__(self, setting: str, reason: str) -> None:
        super().__init__(f"{setting}: {reason}")
        self.setting = setting
        self.reason = reason


class Engine(abc.ABC):
    name: str

    @abc.abstractmethod
    def transcribe(self, samples: np.ndarray) -> list[Segment]:
        """Segments of one mono int16 channel at ``MEDIA_ENGINE_SAMPLE_RATE``, in time order;
        silence gives an empty list."""


def to_float(samples: np.ndarray) -> np.ndarray:
    """int16 → float32 in [-1, 1), what whisper.cpp takes."""
    return samples.astype(np.float32) / 32768.0
