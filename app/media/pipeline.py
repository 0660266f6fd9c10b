"""One recording job, end to end: row → file check → "recording ready" hook → transcription →
sentiment → transcript, call record and events in one transaction → "transcript ready" hook.

Idempotent by construction, because a job can be delivered more than once (a worker killed
after its commit but before its ack, a broker that lost the ack):

* the recording row is keyed by a derived id and inserted ON CONFLICT DO NOTHING;
* the final transaction locks the row and does nothing when it is already ``transcribed`` or
  ``failed`` — so the transcript, the call-record update and every bus event exist once;
* each statusHook POST is stamped (``ready_notified_at``, ``transcript_notified_at``) after it
  was delivered, and a redelivery sends only what is not stamped yet (at-least-once).

Retry policy (the worker turns ``Retry`` into a delayed requeue): only what may heal — the
file not yet visible on the shared volume, an engine that raised, the database unreachable —
is retried, up to ``limits.MEDIA_JOB_MAX_DELIVERIES``; a file that is empty, unreadable or
truncated fails at once with ``media.transcription.failed``.
"""
from __future__ import annotations

import logging
import os
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Callable, Protocol

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from app import limits
from app.db.engine import platform_session
from app.events import payloads
from app.media.audio import Audio, UnusableRecording, read_recording
from app.media.engines import Engine
from app.media.jobs import RecordingJob, recording_url
from app.media.sentiment import CallSentiment, analyse
from app.media.transcribe import SpeakerSegment, transcribe_audio
from app.models import Application, CallRecord, Recording, Transcript

log = logging.getLogger(__name__)


class Retry(Exception):
    """Worth another delivery (``reason`` goes into the failed event if none is left)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class HookSender(Protocol):
    def __call__(self, url: str, body: dict[str, Any], *, secret: str | None,
                 basic_auth: tuple[str, str] | None) -> None:
        """POST ``body`` signed with ``secret``; raise when it was not delivered."""


def transcript_url(call_record_public_id: uuid.UUID | str | None) -> str | None:
    if call_record_public_id is None:
        return None
    return f"/api/call-records/{call_record_public_id}/transcript"


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class Outcome:
    """What one delivery did: ``transcribed``, ``failed`` (with reason) or ``duplicate``."""
    status: str
    reason: str | None = None


class Pipeline:
    def __init__(self, engine: Engine, *, recording_dir: str, send_hook: HookSender,
                 call_record_wait_seconds: float = limits.MEDIA_CALL_RECORD_WAIT_SECONDS,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.engine = engine
        self.recording_dir = os.path.realpath(recording_dir)
        self.send_hook = send_hook
        self.call_record_wait = call_record_wait_seconds
        self.sleep = sleep

    # entry point ---------------------------------------------------------------------------
    def run(self, job: RecordingJob, *, attempt: int = 1) -> Outcome:
        """Process one delivery. Raises ``Retry`` when another delivery may succeed and
        ``attempt`` is not the last; on the last attempt the job fails instead."""
        last = attempt >= limits.MEDIA_JOB_MAX_DELIVERIES
        status = self._register(job)
        if status in ("transcribed", "failed"):
            self._send_pending_hooks(job)
            return Outcome("duplicate")
        try:
            audio = self._read(job)
        except UnusableRecording as exc:
            if exc.reason == "missing" and not last:
                raise Retry(exc.reason, exc.detail) from None
            outcome = self._fail(job, exc.reason, exc.detail, attempt)
            self._send_pending_hooks(job)
            return outcome
        self._send_pending_hooks(job)  # "recording ready": the file is there and playable
        record = self._wait_for_call_record(job)
        self._set_status(job, "transcribing")
        started = time.monotonic()
        try:
            segments = transcribe_audio(audio, self.engine,
                                        other_party="agent" if record and record.agent_id else "callee")
        except Exception as exc:  # a native engine raising: maybe transient (memory), bounded
            log.exception("engine %s failed on recording %s", self.engine.name, job.id)
            if not last:
                raise Retry("engine_error", f"{type(exc).__name__}: {exc}") from None
            outcome = self._fail(job, "engine_error", f"{type(exc).__name__}: {exc}", attempt)
            self._send_pending_hooks(job)
            return outcome
        processing_ms = round((time.monotonic() - started) * 1000)
        sentiment = analyse(segments)
        outcome = self._commit(job, audio, segments, sentiment, processing_ms)
        self._send_pending_hooks(job)
        return outcome

    def give_up(self, job: RecordingJob, reason: str, detail: str, attempt: int) -> Outcome:
        """End a job that used up its deliveries (e.g. every attempt killed its worker)."""
        self._register(job)
        outcome = self._fail(job, reason, detail, attempt)
        self._send_pending_hooks(job)
        return outcome

    # steps ---------------------------------------------------------------------------------
    def _register(self, job: RecordingJob) -> str:
        """Insert the row (first delivery) and link it from the call record; return its status."""
        size = os.path.getsize(job.path) if os.path.isfile(job.path) else None
        with platform_session() as s:
            s.execute(pg_insert(Recording).values(
                id=job.id, account_id=job.account_id, call_id=job.call_id, trace_id=job.trace_id,
                format=job.format, stereo=job.stereo, path=job.path, status="recorded",
                size_bytes=size,
                duration_ms=None if job.seconds is None else round(job.seconds * 1000),
                completion_cause=job.completion_cause, status_hook=job.status_hook,
            ).on_conflict_do_nothing(index_elements=[Recording.id]))
            _link_call_record(s, job)
            return s.scalar(select(Recording.status).where(Recording.id == job.id))

    def _read(self, job: RecordingJob) -> Audio:
        real = os.path.realpath(job.path)
        if os.path.commonpath([real, self.recording_dir]) != self.recording_dir:
            raise UnusableRecording("outside_storage", f"{job.path} is not under recording.dir")
        audio = read_recording(real)
        with platform_session() as s:
            s.execute(update(Recording).where(Recording.id == job.id).values(
                duration_ms=round(audio.seconds * 1000), size_bytes=os.path.getsize(real)))
        return audio

    def _wait_for_call_record(self, job: RecordingJob) -> CallRecord | None:
        """RECORD_STOP and the call record both happen at hangup; give the record a moment."""
        deadline = time.monotonic() + self.call_record_wait
        while True:
            with platform_session() as s:
                record = s.scalar(select(CallRecord).where(CallRecord.account_id == job.account_id,
                                                           CallRecord.call_id == job.call_id))
                if record is not None:
                    s.expunge(record)
                    return record
            if time.monotonic() >= deadline:
                log.warning("no call record for call %s after %.0fs; transcribing anyway",
                            job.call_id, self.call_record_wait)
                return None
            self.sleep(0.25)

    def _set_status(self, job: RecordingJob, status: str) -> None:
        with platform_session() as s:
            s.execute(update(Recording).where(Recording.id == job.id,
                                              Recording.status.in_(("recorded", "transcribing")))
                      .values(status=status))

    def _fail(self, job: RecordingJob, reason: str, detail: str, attempt: int) -> Outcome:
        """Mark the recording failed and publish media.transcription.failed — once."""
        with platform_session() as s:
            if not _lock_open(s, job):
                return Outcome("duplicate")
            s.execute(update(Recording).where(Recording.id == job.id).values(
                status="failed", failure_reason=f"{reason}: {detail}"[:1000] if detail else reason))
            payloads.emit("media.transcription.failed",
                          payloads.transcription_failed(job.call_id, recording_id=job.id,
                                                        reason=reason, detail=detail,
                                                        attempts=attempt),
                          account_id=job.account_id, trace_id=job.trace_id, session=s)
        log.warning("recording %s not transcribed: %s %s", job.id, reason, detail)
        return Outcome("failed", reason)

    def _commit(self, job: RecordingJob, audio: Audio, segments: list[SpeakerSegment],
                sentiment: CallSentiment, processing_ms: int) -> Outcome:
        """Transcript, call-record columns and every event in one transaction, once."""
        rows = [{"speaker": seg.speaker, "start": round(seg.start, 3), "end": round(seg.end, 3),
                 "text": seg.text, "polarity": round(score.polarity, 4),
                 "subjectivity": round(score.subjectivity, 4)}
                for seg, score in zip(segments, sentiment.segments)]
        call = sentiment.call
        score = Decimal(str(round(call.polarity, 4))) if segments else None
        label = call.label if segments else None
        with platform_session() as s:
            if not _lock_open(s, job):
                return Outcome("duplicate")
            s.execute(pg_insert(Transcript).values(
                id=uuid.uuid4(), account_id=job.account_id, recording_id=job.id,
                call_id=job.call_id, trace_id=job.trace_id, engine=self.engine.name,
                text="\n".join(f"{r['speaker']}: {r['text']}" for r in rows), segments=rows,
                sentiment=sentiment.to_dict(), sentiment_score=score, sentiment_label=label,
                audio_seconds=Decimal(str(round(audio.seconds, 3))), processing_ms=processing_ms,
            ).on_conflict_do_nothing(index_elements=[Transcript.recording_id]))
            s.execute(update(Recording).where(Recording.id == job.id).values(status="transcribed"))
            public_id = s.scalar(
                update(CallRecord)
                .where(CallRecord.account_id == job.account_id, CallRecord.call_id == job.call_id)
                .values(has_transcript=True, sentiment_score=score, sentiment_label=label)
                .returning(CallRecord.public_id))
            _link_call_record(s, job)
            self._emit_results(s, job, audio, rows, sentiment, processing_ms, public_id)
        return Outcome("transcribed")

    def _emit_results(self, s: Session, job: RecordingJob, audio: Audio, rows: list[dict[str, Any]],
                      sentiment: CallSentiment, processing_ms: int, public_id: uuid.UUID | None) -> None:
        def emit(key: str, payload: dict[str, Any]) -> None:
            payloads.emit(key, payload, account_id=job.account_id, trace_id=job.trace_id, session=s)

        url = transcript_url(public_id) or ""
        speakers = sorted(sentiment.speakers)
        emit("media.transcription.complete", payloads.transcription_complete(
            job.call_id, recording_id=job.id, transcript_url=url, engine=self.engine.name,
            audio_seconds=audio.seconds, processing_ms=processing_ms, segments=len(rows),
            speakers=speakers))
        for speaker in speakers:
            emit("sentiment.score", payloads.sentiment_score(
                job.call_id, recording_id=job.id, speaker=speaker,
                score=sentiment.speakers[speaker].to_dict()))
        emit("sentiment.emotion", payloads.sentiment_emotion(
            job.call_id, recording_id=job.id, emotion=sentiment.emotion.to_dict()))
        emit("sentiment.summary", payloads.sentiment_summary(
            job.call_id, recording_id=job.id, call_record_id=public_id,
            score=sentiment.call.to_dict(), emotion=sentiment.emotion.emotion,
            speakers={k: v.to_dict() for k, v in sentiment.speakers.items()}, transcript_url=url))

    # statusHook ----------------------------------------------------------------------------
    def _send_pending_hooks(self, job: RecordingJob) -> None:
        """POST what the hook has not been told yet: "recording ready" once the row exists,
        "transcript ready" (or "transcript failed") once the job ended. A delivery failure is
        logged and left unstamped: the next delivery of the job tries again."""
        if not job.status_hook:
            return
        with platform_session() as s:
            rec = s.get(Recording, job.id)
            record = s.scalar(select(CallRecord).where(CallRecord.account_id == job.account_id,
                                                       CallRecord.call_id == job.call_id))
            app = s.get(Application, record.application_id) if record and record.application_id else None
            transcript = s.scalar(select(Transcript).where(Transcript.recording_id == job.id))
            due = []
            # a recording that failed before it was usable never was "ready"
            if rec.ready_notified_at is None and rec.status != "failed":
                due.append(("ready_notified_at", _ready_body(job, rec, record)))
            if rec.transcript_notified_at is None and rec.status in ("transcribed", "failed"):
                due.append(("transcript_notified_at", _transcript_body(job, rec, record, transcript)))
            secret, basic_auth = _app_credentials(app)
        for column, body in due:
            try:
                self.send_hook(job.status_hook, body, secret=secret, basic_auth=basic_auth)
            except Exception as exc:  # WebhookFailed or a refused URL: keep the job going
                log.warning("statusHook for recording %s failed (%s): %s", job.id, body["event"], exc)
                return
            with platform_session() as s:
                s.execute(update(Recording).where(Recording.id == job.id).values({column: _now()}))


def _lock_open(s: Session, job: RecordingJob) -> bool:
    """Lock the row; True when it still needs an ending (not transcribed/failed yet)."""
    status = s.scalar(select(Recording.status).where(Recording.id == job.id).with_for_update())
    return status not in ("transcribed", "failed")


def _link_call_record(s: Session, job: RecordingJob) -> None:
    """The call record's Recording column carries the first recording's URL."""
    s.execute(update(CallRecord)
              .where(CallRecord.account_id == job.account_id, CallRecord.call_id == job.call_id,
                     CallRecord.recording_url.is_(None))
              .values(recording_url=recording_url(job.id), has_recording=True))


def _app_credentials(app: Application | None) -> tuple[str | None, tuple[str, str] | None]:
    if app is None:
        return None, None
    from app.crypto import decrypt_secret

    secret = decrypt_secret(app.signing_secret_encrypted) if app.signing_secret_encrypted else None
    basic = None
    if app.basic_auth_username and app.basic_auth_password_encrypted:
        basic = (app.basic_auth_username, decrypt_secret(app.basic_auth_password_encrypted))
    return secret, basic


def _common(job: RecordingJob, rec: Recording, record: CallRecord | None) -> dict[str, Any]:
    return {
        "callId": str(job.call_id), "traceId": str(job.trace_id) if job.trace_id else None,
        "accountSid": str(job.account_id), "recordingSid": str(job.id),
        "callRecordSid": str(record.public_id) if record else None,
        "recordingUrl": recording_url(job.id), "audioUrl": recording_url(job.id) + "/audio",
        "format": rec.format, "stereo": rec.stereo,
        "duration": None if rec.duration_ms is None else round(rec.duration_ms / 1000, 3),
    }


def _ready_body(job: RecordingJob, rec: Recording, record: CallRecord | None) -> dict[str, Any]:
    return {"event": "recording.ready", **_common(job, rec, record), "recordingStatus": "ready"}


def _transcript_body(job: RecordingJob, rec: Recording, record: CallRecord | None,
                     transcript: Transcript | None) -> dict[str, Any]:
    body = {"event": "transcript.ready" if transcript else "transcript.failed",
            **_common(job, rec, record)}
    if transcript is not None:
        body.update({
            "transcriptUrl": transcript_url(record.public_id) if record else None,
            "transcriptStatus": "complete", "engine": transcript.engine,
            "sentiment": {"label": transcript.sentiment_label,
                          "score": None if transcript.sentiment_score is None
                          else float(transcript.sentiment_score),
                          "emotion": transcript.sentiment.get("emotion", {}).get("emotion")},
        })
    else:
        body.update({"transcriptStatus": "failed", "reason": rec.failure_reason})
    return body
