"""The pipeline on real audio, real engines and the real database: one job from the recording
row to the transcript, the call record's columns, the bus events and the statusHook."""
from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
from sqlalchemy import select, text

from app import limits
from app.db.engine import platform_session
from app.media.engines.base import Engine, Segment
from app.media.jobs import RecordingJob
from app.media.pipeline import Pipeline, Retry
from app.models import Application, CallRecord, Recording, Transcript
from app.webhooks.client import WebhookClient
from app.webhooks.signing import SIGNATURE_HEADER, verify
from tests.media.conftest import recording_event, stereo_call


def _no_hooks(url, body, *, secret, basic_auth):  # pragma: no cover - never called without a hook
    raise AssertionError("no statusHook expected")


def _pipeline(engine, recording_dir, send_hook=_no_hooks) -> Pipeline:
    return Pipeline(engine, recording_dir=str(recording_dir), send_hook=send_hook,
                    call_record_wait_seconds=0)


def _events(recording_id) -> list[tuple[str, dict]]:
    with platform_session() as s:
        rows = s.execute(text(
            "SELECT routing_key, body FROM event_outbox "
            "WHERE body->'payload'->>'recordingId' = :r ORDER BY created_at, id"),
            {"r": str(recording_id)}).all()
    return [(r.routing_key, r.body["payload"]) for r in rows]


def _row(model, **where):
    with platform_session() as s:
        row = s.scalar(select(model).filter_by(**where))
        if row is not None:
            s.expunge(row)
        return row


def test_stereo_telephone_call_is_transcribed_per_speaker_merged_by_time_and_scored(
        whisper_engine, speech, write_recording, recording_dir, call_record):
    record = call_record()
    frames = stereo_call(left=[(0.0, speech["angry"])], right=[(4.5, speech["hello"])], seconds=9)
    path = write_recording(frames)
    job = RecordingJob.from_envelope(recording_event(record, path))

    outcome = _pipeline(whisper_engine, recording_dir).run(job)

    assert outcome.status == "transcribed"
    transcript = _row(Transcript, recording_id=job.id)
    speakers = [(s["speaker"], s["text"]) for s in transcript.segments]
    assert [s for s, _ in speakers] == ["caller", "callee"]
    # 8 kHz telephone audio: "refund" is sometimes heard as "reason", the rest is stable
    assert "terrible" in speakers[0][1].lower() and "angry" in speakers[0][1].lower()
    assert "happy" in speakers[1][1].lower()
    assert transcript.segments[0]["start"] < transcript.segments[1]["start"]
    assert transcript.segments[0]["polarity"] < -0.5 < 0.5 < transcript.segments[1]["polarity"]
    assert transcript.engine == "whisper"
    assert float(transcript.audio_seconds) == pytest.approx(9.0, abs=0.01)
    assert transcript.sentiment["speakers"]["caller"]["label"] == "negative"
    assert transcript.sentiment["speakers"]["callee"]["label"] == "positive"
    assert transcript.sentiment["emotion"]["emotion"] == "angry"

    cdr = _row(CallRecord, call_id=record.call_id)
    assert cdr.has_transcript and cdr.has_recording
    assert cdr.recording_url == f"/api/recordings/{job.id}"
    assert cdr.sentiment_label == transcript.sentiment_label
    assert float(cdr.sentiment_score) == pytest.approx(transcript.sentiment["call"]["polarity"], abs=1e-4)
    rec = _row(Recording, id=job.id)
    assert (rec.status, rec.duration_ms, rec.stereo, rec.format) == ("transcribed", 9000, True, "wav")

    events = _events(job.id)
    keys = [k for k, _ in events]
    assert keys == ["media.transcription.complete", "sentiment.score", "sentiment.score",
                    "sentiment.emotion", "sentiment.summary"]
    summary = events[-1][1]
    assert summary["callRecordSid"] == str(cdr.public_id)
    assert summary["transcriptUrl"] == f"/api/call-records/{cdr.public_id}/transcript"
    assert summary["emotion"] == "angry" and set(summary["speakers"]) == {"caller", "callee"}
    assert {p["speaker"] for k, p in events if k == "sentiment.score"} == {"caller", "callee"}


def test_redelivered_job_writes_and_publishes_nothing_twice(
        pocketsphinx_engine, speech, write_recording, recording_dir, call_record):
    record = call_record()
    path = write_recording(stereo_call([(0.2, speech["hello"])], [], seconds=4))
    job = RecordingJob.from_envelope(recording_event(record, path))
    pipeline = _pipeline(pocketsphinx_engine, recording_dir)

    assert pipeline.run(job).status == "transcribed"
    events = _events(job.id)
    assert pipeline.run(job, attempt=2).status == "duplicate"

    with platform_session() as s:
        assert s.scalar(select(text("count(*)")).select_from(Transcript)
                        .where(Transcript.recording_id == job.id)) == 1
        assert s.scalar(select(text("count(*)")).select_from(Recording)
                        .where(Recording.call_id == record.call_id)) == 1
    assert _events(job.id) == events


def test_mono_mp3_recording_is_transcribed_as_one_mixed_speaker(
        pocketsphinx_engine, speech, write_recording, recording_dir, call_record):
    record = call_record()
    path = write_recording(np.concatenate([speech["hello"], np.zeros(4000, np.int16)]), fmt="mp3")
    job = RecordingJob.from_envelope(recording_event(record, path, fmt="mp3", stereo=False))

    assert _pipeline(pocketsphinx_engine, recording_dir).run(job).status == "transcribed"

    transcript = _row(Transcript, recording_id=job.id)
    assert {s["speaker"] for s in transcript.segments} == {"call"}
    assert "happy" in transcript.text
    assert _row(Recording, id=job.id).format == "mp3"


@pytest.mark.parametrize("content, reason", [
    (b"", "empty"),
    (b"this is not audio at all" * 10, "unreadable"),
], ids=["empty", "unreadable"])
def test_unusable_file_fails_at_once_with_its_reason(content, reason, pocketsphinx_engine,
                                                     recording_dir, call_record):
    record = call_record()
    path = recording_dir / f"{uuid.uuid4().hex}.wav"
    path.write_bytes(content)
    job = RecordingJob.from_envelope(recording_event(record, path))

    outcome = _pipeline(pocketsphinx_engine, recording_dir).run(job, attempt=1)

    assert (outcome.status, outcome.reason) == ("failed", reason)
    assert _row(Recording, id=job.id).status == "failed"
    assert [(k, p["reason"]) for k, p in _events(job.id)] == [("media.transcription.failed", reason)]
    assert _row(Transcript, recording_id=job.id) is None


def test_truncated_wav_fails_as_truncated_not_transcribed_short(
        pocketsphinx_engine, speech, write_recording, recording_dir, call_record):
    record = call_record()
    path = write_recording(stereo_call([(0, speech["hello"])], [], seconds=4))
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])  # the switch died mid-call: header says more
    job = RecordingJob.from_envelope(recording_event(record, path))

    outcome = _pipeline(pocketsphinx_engine, recording_dir).run(job)

    assert (outcome.status, outcome.reason) == ("failed", "truncated")


def test_file_not_yet_on_the_shared_volume_is_retried_then_fails_on_the_last_attempt(
        pocketsphinx_engine, recording_dir, call_record):
    record = call_record()
    job = RecordingJob.from_envelope(recording_event(record, recording_dir / "late.wav"))
    pipeline = _pipeline(pocketsphinx_engine, recording_dir)

    with pytest.raises(Retry):
        pipeline.run(job, attempt=1)
    assert _row(Recording, id=job.id).status == "recorded"
    outcome = pipeline.run(job, attempt=limits.MEDIA_JOB_MAX_DELIVERIES)

    assert (outcome.status, outcome.reason) == ("failed", "missing")
    assert [p["attempts"] for _, p in _events(job.id)] == [limits.MEDIA_JOB_MAX_DELIVERIES]


def test_path_outside_the_recording_directory_is_refused(pocketsphinx_engine, speech, tmp_path,
                                                         recording_dir, call_record):
    record = call_record()
    import soundfile
    outside = tmp_path / "elsewhere.wav"
    soundfile.write(outside, speech["hello"], 8000)
    job = RecordingJob.from_envelope(recording_event(record, outside))

    outcome = _pipeline(pocketsphinx_engine, recording_dir).run(job)

    assert (outcome.status, outcome.reason) == ("failed", "outside_storage")


class RaisingEngine(Engine):
    name = "raising"

    def transcribe(self, samples):
        raise MemoryError("model ran out of memory")


def test_engine_that_raises_is_retried_then_ends_in_transcription_failed(
        speech, write_recording, recording_dir, call_record):
    record = call_record()
    path = write_recording(speech["hello"])
    job = RecordingJob.from_envelope(recording_event(record, path, stereo=False))
    pipeline = _pipeline(RaisingEngine(), recording_dir)

    with pytest.raises(Retry) as retry:
        pipeline.run(job, attempt=1)
    assert retry.value.reason == "engine_error"
    outcome = pipeline.run(job, attempt=limits.MEDIA_JOB_MAX_DELIVERIES)

    assert (outcome.status, outcome.reason) == ("failed", "engine_error")
    (key, payload), = _events(job.id)
    assert key == "media.transcription.failed" and "MemoryError" in payload["detail"]


class SilentEngine(Engine):
    name = "silent"

    def transcribe(self, samples):
        return [] if not samples.any() else [Segment(0.0, 1.0, "ok")]


def test_status_hook_gets_a_signed_post_when_the_recording_is_ready_and_again_with_the_transcript(
        hook_server, speech, write_recording, recording_dir, call_record, make_account):
    from app.crypto import encrypt_secret

    account = make_account()
    with platform_session() as s:
        app = Application(account_id=account.id, name="rec-app",
                          signing_secret_encrypted=encrypt_secret("whsec-media"))
        s.add(app)
        s.flush()
        app_id = app.id
    record = call_record(account, application_id=app_id)
    path = write_recording(speech["hello"])
    job = RecordingJob.from_envelope(recording_event(record, path, stereo=False,
                                                     status_hook=hook_server.url("/rec")))
    client = WebhookClient(allow_loopback=True)
    pipeline = _pipeline(SilentEngine(), recording_dir,
                         send_hook=lambda url, body, *, secret, basic_auth:
                         client.post_status(url, body, secret=secret, basic_auth=basic_auth))

    pipeline.run(job)
    pipeline.run(job, attempt=2)  # a redelivery notifies nobody again

    bodies = [json.loads(r.body) for r in hook_server.requests]
    assert [b["event"] for b in bodies] == ["recording.ready", "transcript.ready"]
    for request in hook_server.requests:
        assert verify(request.body, "whsec-media", request.headers[SIGNATURE_HEADER.lower()])
    assert bodies[0]["recordingUrl"] == f"/api/recordings/{job.id}"
    assert bodies[0]["audioUrl"] == f"/api/recordings/{job.id}/audio"
    assert bodies[1]["transcriptUrl"] == f"/api/call-records/{record.public_id}/transcript"
    assert bodies[1]["sentiment"]["label"] == "positive"  # TextBlob: "ok" is +0.5
    rec = _row(Recording, id=job.id)
    assert rec.ready_notified_at is not None and rec.transcript_notified_at is not None
