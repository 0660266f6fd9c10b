"""Voice activity cutting before the engine (app/media/transcribe.py): a caller cut off while
speaking — the call hung up mid-sentence — keeps the words said, wherever the cut falls."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile

from app.media.transcribe import speech_regions, utterances
from tests.media.conftest import AUDIO, require_models

RATE = 16000
FRAME = 480  # the segmenter's 30 ms frame at 16 kHz


@pytest.fixture(scope="module")
def hello() -> np.ndarray:
    data, rate = soundfile.read(require_models(AUDIO) / "hello16k.wav", dtype="int16")
    assert rate == RATE
    return data


@pytest.mark.parametrize("cut", [64 * FRAME, 64 * FRAME + 200, 65 * FRAME - 1],
                         ids=["on-a-frame-boundary", "mid-frame", "one-sample-short"])
def test_speech_cut_off_by_the_end_of_the_audio_is_kept_up_to_the_cut(hello, cut):
    audio = hello[:cut]
    regions = speech_regions(audio.tobytes(), RATE)
    assert len(regions) == 1, regions
    start, end = regions[0]
    assert start < 0.5 and end == pytest.approx(cut / RATE, abs=0.031)
    [(offset, samples)] = utterances(audio, RATE)
    assert offset + len(samples) / RATE == pytest.approx(cut / RATE, abs=0.001)


def test_pauses_split_speech_into_utterances_in_time_order(hello):
    pause = np.zeros(RATE, dtype=np.int16)
    regions = speech_regions(np.concatenate([hello, pause, hello]).tobytes(), RATE)
    assert len(regions) == 2, regions
    assert regions[0][1] < len(hello) / RATE + 0.5 < regions[1][0]


def test_silence_and_empty_audio_have_no_speech():
    assert speech_regions(np.zeros(RATE, dtype=np.int16).tobytes(), RATE) == []
    assert speech_regions(b"", RATE) == []
