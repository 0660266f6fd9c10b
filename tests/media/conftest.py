"""Media pipeline fixtures: real engines, real audio (espeak-ng speech from ../shared/models),
real PostgreSQL/RabbitMQ. The whisper model is read from ``SBC_TEST_MODELS_DIR`` (default
``../shared/models`` beside the repository): without it the whisper tests skip in one line,
except under CI=true, where its absence is a failure."""
from __future__ import annotations

import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import soundfile

from app.db.engine import platform_session
from app.events.envelope import make_envelope
from app.models import CallRecord
from tests.plugins.skips import skip_or_fail_in_ci

REPO = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("SBC_TEST_MODELS_DIR", REPO.parent / "shared" / "models"))
WHISPER_MODEL = MODELS_DIR / "whisper" / "ggml-tiny.en-q8_0.bin"
AUDIO = MODELS_DIR / "audio"
HAPPY = "I am very happy with the service, thank you"
ANGRY = "This is terrible. I am very angry and I want a refund."


def require_models(path: Path) -> Path:
    if path.exists():
        return path
    skip_or_fail_in_ci(f"{path} not found (set SBC_TEST_MODELS_DIR to the shared models folder)")


@pytest.fixture(scope="session")
def whisper_model() -> Path:
    return require_models(WHISPER_MODEL)


@pytest.fixture(scope="session")
def speech() -> dict[str, np.ndarray]:
    """The two espeak-ng sentences at 8 kHz (telephone rate), int16 mono."""
    from app.media.audio import resample

    require_models(AUDIO)
    out = {}
    for name in ("hello", "angry"):
        data, rate = soundfile.read(AUDIO / f"{name}16k.wav", dtype="int16")
        out[name] = resample(data, rate, 8000)
    return out


def stereo_call(left: list[tuple[float, np.ndarray]], right: list[tuple[float, np.ndarray]],
                seconds: float, rate: int = 8000) -> np.ndarray:
    """A two-channel call: each side's utterances placed at their start times (seconds)."""
    out = np.zeros((int(seconds * rate), 2), dtype=np.int16)
    for channel, side in ((0, left), (1, right)):
        for start, samples in side:
            at = int(start * rate)
            out[at:at + len(samples), channel] = samples[: len(out) - at]
    return out


@pytest.fixture
def recording_dir(tmp_path) -> Path:
    d = tmp_path / "rec"
    d.mkdir()
    return d


@pytest.fixture
def write_recording(recording_dir) -> Callable[..., Path]:
    def write(frames: np.ndarray, fmt: str = "wav", rate: int = 8000, name: str | None = None) -> Path:
        path = recording_dir / (name or f"{uuid.uuid4().hex}.{fmt}")
        soundfile.write(path, frames, rate, format=fmt.upper())
        return path
    return write


@pytest.fixture
def call_record(make_account) -> Callable[..., CallRecord]:
    """``call_record(account=None, agent=False)``: a finished call's record on the platform path."""
    def make(account: Any = None, **values: Any) -> CallRecord:
        account = account or make_account()
        now = datetime.now(timezone.utc)
        record = CallRecord(account_id=account.id, trace_id=uuid.uuid4(), call_id=uuid.uuid4(),
                            direction="inbound", started_at=now, ended_at=now, status="completed",
                            from_number="15550001", to_number="15550002", **values)
        with platform_session() as s:
            s.add(record)
            s.flush()
            s.refresh(record)
            s.expunge(record)
        record.account = account
        return record
    return make


def recording_event(record: CallRecord, path: Path, *, fmt: str = "wav", stereo: bool = True,
                    status_hook: str | None = None, seconds: float | None = None):
    """What the record/dial/conference verbs publish (their one payload builder)."""
    from app.events.payloads import recording_completed

    return make_envelope("media.recording.completed", recording_completed(
        record.call_id, trace_id=record.trace_id, account_id=record.account_id, path=str(path),
        fmt=fmt, stereo=stereo, seconds=seconds, completion_cause="success-silence",
        status_hook=status_hook), account_id=record.account_id, trace_id=record.trace_id)


@pytest.fixture(scope="session")
def pocketsphinx_engine():
    from app.media.engines.pocketsphinx_engine import PocketsphinxEngine
    return PocketsphinxEngine()


@pytest.fixture(scope="session")
def whisper_engine(whisper_model):
    from app.media.engines.whisper_engine import WhisperEngine
    return WhisperEngine(str(whisper_model), threads=2)
