"""A finished call with its recording (and transcript) as the media workers leave them: the
rows the recordings API and the console's call-record screen read."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from app.db.engine import platform_session
from app.media.jobs import recording_id
from app.models import CallRecord, Recording, Transcript


def seed_recorded_call(account_id: uuid.UUID, path: Path, *, transcript: bool = True, recording_ms: int = 1000,
                       **record_values: Any) -> SimpleNamespace:
    """``record_values``: call_records columns over the defaults (an inbound call started now)."""
    values: dict[str, Any] = {"direction": "inbound", "started_at": datetime.now(timezone.utc),
                              "status": "completed", **record_values}
    record = CallRecord(account_id=account_id, trace_id=uuid.uuid4(), call_id=uuid.uuid4(), **values)
    rec_id = recording_id(account_id, str(path))
    with platform_session() as s:
        s.add(record)
        s.flush()
        s.add(Recording(id=rec_id, account_id=account_id, call_id=record.call_id, format="wav",
                        stereo=True, path=str(path), status="transcribed", duration_ms=recording_ms,
                        size_bytes=path.stat().st_size if path.exists() else None))
        s.flush()
        if transcript:
            s.add(Transcript(
                id=uuid.uuid4(), account_id=account_id, recording_id=rec_id, call_id=record.call_id,
                engine="whisper", text="caller: This is terrible.\ncallee: Happy to help.",
                segments=[{"speaker": "caller", "start": 0.2, "end": 1.5, "text": "This is terrible.",
                           "polarity": -1.0, "subjectivity": 1.0},
                          {"speaker": "callee", "start": 1.8, "end": 2.6, "text": "Happy to help.",
                           "polarity": 0.8, "subjectivity": 1.0}],
                sentiment={"call": {"polarity": -0.1, "label": "negative"}}, sentiment_score=-0.1,
                sentiment_label="negative", audio_seconds=3, processing_ms=10))
        public_id = record.public_id
    return SimpleNamespace(public_id=public_id, recording_id=rec_id, call_id=record.call_id)
