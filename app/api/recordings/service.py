"""Reading recordings and transcripts under the caller's RLS session; another tenant's id is
a plain 404."""
from __future__ import annotations

import json
import os
import uuid
from typing import Any

import gevent
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import limits
from app.errors import NotFound, ValidationFailed
from app.media.audio import UnusableRecording
from app.media.jobs import recording_url
from app.media.peaks import read_peaks
from app.media.storage import account_recording_file
from app.models import CallRecord, Recording, Transcript


def _body(rec: Recording) -> dict[str, Any]:
    body = {name: getattr(rec, name) for name in Recording.__table__.c.keys()}
    body["audio_url"] = recording_url(rec.id) + "/audio"
    return body


def get_recording(db: Session, account_id: uuid.UUID, recording_id: uuid.UUID) -> Recording:
    rec = db.scalar(select(Recording).where(Recording.id == recording_id,
                                            Recording.account_id == account_id))
    if rec is None:
        raise NotFound("No such recording.", code="recording_not_found")
    return rec


def recording(db: Session, account_id: uuid.UUID, recording_id: uuid.UUID) -> dict[str, Any]:
    return _body(get_recording(db, account_id, recording_id))


def audio_path(db: Session, account_id: uuid.UUID, recording_id: uuid.UUID,
               recording_dir: str) -> tuple[str, str]:
    """(file path, format) of a recording's audio: only a file of the caller's own account
    directly in ``recording.dir`` (``app.media.storage``); a row whose path names anything else
    (outside, a subdirectory, another account's file) is served nothing."""
    rec = get_recording(db, account_id, recording_id)
    real = account_recording_file(rec.path, recording_dir, account_id)
    if real is None:
        raise NotFound("The recording's audio is not available.", code="recording_audio_not_found")
    return real, rec.format


def peaks(db: Session, account_id: uuid.UUID, recording_id: uuid.UUID, recording_dir: str,
          cache: redis.Redis, prefix: str) -> dict[str, Any]:
    """The recording's waveform (``app.media.peaks``), read from its file once and then from
    Redis. The tenant check comes first (``audio_path``): another tenant's id is a 404 whether
    or not its peaks are cached. The key names the file's size and modification time, so a
    file replaced under the same id is read again. The file is read on gevent's threadpool
    (libsndfile and numpy release the GIL): decoding an hours-long recording does not hold up
    the other requests this process serves."""
    path, _ = audio_path(db, account_id, recording_id, recording_dir)
    stat = os.stat(path)
    key = f"{prefix}recording-peaks:{recording_id}:{stat.st_size}:{stat.st_mtime_ns}"
    cached = cache.get(key)
    if cached:
        return json.loads(cached)
    try:
        read = gevent.get_hub().threadpool.apply(read_peaks, (path, limits.RECORDING_PEAKS))
    except UnusableRecording as exc:
        raise ValidationFailed("The recording's audio cannot be read for a waveform.",
                               code="recording_audio_unreadable", details={"reason": exc.reason}) from None
    body = {"recording_id": str(recording_id), "peaks": read.peaks,
            "duration_seconds": round(read.duration_seconds, 3)}
    cache.set(key, json.dumps(body), ex=limits.RECORDING_PEAKS_CACHE_SECONDS)
    return body


def _call_record(db: Session, account_id: uuid.UUID, public_id: uuid.UUID) -> CallRecord:
    record = db.scalar(select(CallRecord).where(CallRecord.public_id == public_id,
                                                CallRecord.account_id == account_id))
    if record is None:
        raise NotFound("No such call record.", code="call_record_not_found")
    return record


def recordings_of_call(db: Session, account_id: uuid.UUID, public_id: uuid.UUID) -> dict[str, Any]:
    record = _call_record(db, account_id, public_id)
    rows = db.scalars(select(Recording).where(Recording.account_id == account_id,
                                              Recording.call_id == record.call_id)
                      .order_by(Recording.created_at, Recording.id)).all()
    return {"items": [_body(r) for r in rows]}


def transcript_of_call(db: Session, account_id: uuid.UUID, public_id: uuid.UUID) -> Transcript:
    """The call's transcript (the first recording's, when a call has several)."""
    record = _call_record(db, account_id, public_id)
    transcript = db.scalar(select(Transcript).where(Transcript.account_id == account_id,
                                                    Transcript.call_id == record.call_id)
                           .order_by(Transcript.created_at, Transcript.id).limit(1))
    if transcript is None:
        raise NotFound("This call has no transcript (yet).", code="transcript_not_found")
    return transcript
