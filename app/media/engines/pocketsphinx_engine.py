"""pocketsphinx (CMU Sphinx) with the US-English model its wheel ships: the default engine,
so a fresh install transcribes without any model to provide. Least accurate of the three
(see README figures), but small, fast to load and always there."""
from __future__ import annotations

import numpy as np
from pocketsphinx import Decoder

from app import limits
from app.media.engines.base import Engine, Segment


class PocketsphinxEngine(Engine):
    name = "pocketsphinx"

    def __init__(self) -> None:
        # its bundled en-us acoustic model refuses 8 kHz: the caller resamples to 16 kHz
        self._decoder = Decoder(samprate=limits.MEDIA_ENGINE_SAMPLE_RATE, loglevel="FATAL")

    def transcribe(self, samples: np.ndarray) -> list[Segment]:
        """The utterance decoded as one segment (``transcribe_audio`` already split the
        channel at pauses)."""
        self._decoder.start_utt()
        self._decoder.process_raw(samples.astype("<i2").tobytes(), full_utt=True)
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        text = hyp.hypstr.strip() if hyp is not None else ""
        if not text:
            return []
        return [Segment(0.0, round(len(samples) / limits.MEDIA_ENGINE_SAMPLE_RATE, 3), text)]
