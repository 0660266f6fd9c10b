"""The media worker on the real broker: durable quorum queue, competing consumers, manual
acks, redelivery after a worker dies mid-job, bounded deliveries and the dead-letter queue."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from typing import Iterator

import pika
import pytest
from sqlalchemy import select, text

from app import limits
from app.config import set_value
from app.db.engine import platform_session
from app.events.exchanges import MEDIA_EVENTS
from app.media.engines.base import Engine
from app.media.jobs import RecordingJob
from app.media.pipeline import Pipeline
from app.media.worker import DEAD_LETTER_QUEUE, QUEUE, MediaWorker, declare_topology
from app.models import Recording, Transcript
from app.settings import get_settings
from tests.media.conftest import REPO, recording_event, stereo_call
from tests.plugins.eventually import eventually
from tests.plugins.services import close_vhost_connections, create_vhost, delete_vhost

MEDIA_VHOST = f"sbc_{os.environ['SBC_TEST_RUN_ID']}_media"
MEDIA_AMQP_URL = get_settings().amqp_url.rsplit("/", 1)[0] + "/" + MEDIA_VHOST


@pytest.fixture(scope="module")
def media_vhost() -> Iterator[str]:
    """A vhost of these tests' own: media workers of other suites (the real-switch product's
    ``sbc workers``) consume the run's vhost and must not take these jobs."""
    create_vhost(MEDIA_VHOST)
    yield MEDIA_VHOST
    delete_vhost(MEDIA_VHOST)


def media_env() -> dict[str, str]:
    return {**os.environ, "SBC_AMQP_URL": MEDIA_AMQP_URL}


@pytest.fixture
def broker(media_vhost) -> Iterator[pika.adapters.blocking_connection.BlockingChannel]:
    """A channel on the media vhost with the media queues declared and empty."""
    def purged():
        conn = pika.BlockingConnection(pika.URLParameters(MEDIA_AMQP_URL))
        channel = conn.channel()
        declare_topology(channel)
        channel.queue_purge(QUEUE)
        channel.queue_purge(DEAD_LETTER_QUEUE)
        return conn, channel

    conn, channel = purged()
    yield channel
    with contextlib.suppress(pika.exceptions.AMQPError):  # closed by a broker-loss test
        conn.close()
    purged()[0].close()  # a fresh connection: the test may have had this one closed


def publish(channel, envelope_or_body) -> None:
    body = envelope_or_body if isinstance(envelope_or_body, bytes) else envelope_or_body.to_json()
    channel.basic_publish(MEDIA_EVENTS, "media.recording.completed", body,
                          pika.BasicProperties(delivery_mode=2, content_type="application/json"))


def status_of(recording_id) -> str | None:
    with platform_session() as s:
        return s.scalar(select(Recording.status).where(Recording.id == recording_id))


def count_events(recording_id, key: str) -> int:
    with platform_session() as s:
        return s.scalar(text("SELECT count(*) FROM event_outbox WHERE routing_key = :k "
                             "AND body->'payload'->>'recordingId' = :r"),
                        {"k": key, "r": str(recording_id)})


def dead_letters(channel) -> list[dict]:
    out = []
    while True:
        method, _props, body = channel.basic_get(DEAD_LETTER_QUEUE, auto_ack=True)
        if method is None:
            return out
        out.append(json.loads(body))


def _pipeline(engine, recording_dir) -> Pipeline:
    return Pipeline(engine, recording_dir=str(recording_dir), call_record_wait_seconds=0,
                    send_hook=lambda *a, **k: None)


def test_competing_workers_transcribe_every_job_exactly_once(
        broker, pocketsphinx_engine, speech, write_recording, recording_dir, call_record):
    jobs = []
    for _ in range(4):
        record = call_record()
        path = write_recording(stereo_call([(0.1, speech["hello"])], [], seconds=4))
        envelope = recording_event(record, path)
        jobs.append(RecordingJob.from_envelope(envelope))
        publish(broker, envelope)
    workers = [MediaWorker(_pipeline(pocketsphinx_engine, recording_dir), amqp_url=MEDIA_AMQP_URL).start()
               for _ in range(2)]
    try:
        eventually(lambda: all(status_of(j.id) == "transcribed" for j in jobs), timeout=90, what="4 transcripts")
    finally:
        for w in workers:
            w.stop()
    assert sorted(r for w in workers for r, _ in w.outcomes) == sorted(str(j.id) for j in jobs)
    assert all(count_events(j.id, "media.transcription.complete") == 1 for j in jobs)
    assert broker.queue_declare(QUEUE, passive=True).method.message_count == 0


class RaisingEngine(Engine):
    name = "raising"

    def transcribe(self, samples):
        raise RuntimeError("model raised")


def test_model_that_keeps_raising_is_retried_a_bounded_number_of_times_then_failed(
        broker, speech, write_recording, recording_dir, call_record):
    record = call_record()
    path = write_recording(speech["hello"])
    envelope = recording_event(record, path, stereo=False)
    job = RecordingJob.from_envelope(envelope)
    publish(broker, envelope)
    worker = MediaWorker(_pipeline(RaisingEngine(), recording_dir), sleep=lambda _s: None,
                         amqp_url=MEDIA_AMQP_URL).start()
    try:
        eventually(lambda: status_of(job.id) == "failed", timeout=90, what="failed job")
    finally:
        worker.stop()
    outcomes = [o for _, o in worker.outcomes]
    assert outcomes[:-1] == ["retry"] * (limits.MEDIA_JOB_MAX_DELIVERIES - 1)
    assert outcomes[-1].reason == "engine_error"
    assert count_events(job.id, "media.transcription.failed") == 1
    assert broker.queue_declare(QUEUE, passive=True).method.message_count == 0


def test_job_whose_worker_dies_on_every_delivery_ends_failed_and_in_the_dead_letter_queue(
        broker, pocketsphinx_engine, speech, write_recording, recording_dir, call_record):
    record = call_record()
    path = write_recording(speech["hello"])
    envelope = recording_event(record, path, stereo=False)
    job = RecordingJob.from_envelope(envelope)
    publish(broker, envelope)
    for _ in range(limits.MEDIA_JOB_MAX_DELIVERIES):
        # what the broker sees of a worker killed mid-job: a delivery, then the connection gone
        conn = pika.BlockingConnection(pika.URLParameters(MEDIA_AMQP_URL))
        channel = conn.channel()
        method = eventually(lambda: channel.basic_get(QUEUE)[0], timeout=90, what="a delivery")
        assert method is not None
        conn.close()  # no ack
    worker = MediaWorker(_pipeline(pocketsphinx_engine, recording_dir), amqp_url=MEDIA_AMQP_URL).start()
    try:
        eventually(lambda: status_of(job.id) == "failed", timeout=90, what="failed job")
    finally:
        worker.stop()
    assert count_events(job.id, "media.transcription.failed") == 1
    with platform_session() as s:
        assert s.scalar(select(Recording.failure_reason).where(Recording.id == job.id)).startswith(
            "worker_crashed")
    dead = eventually(lambda: dead_letters(broker), timeout=90, what="a dead letter")
    assert [d["payload"]["path"] for d in dead] == [str(path)]


def test_message_that_is_not_a_recording_job_goes_to_the_dead_letter_queue(broker, pocketsphinx_engine,
                                                                           recording_dir):
    publish(broker, b'{"id": "x", "type": "media.recording.completed", "occurred_at": "now", '
                    b'"payload": {"path": "relative.wav"}}')
    worker = MediaWorker(_pipeline(pocketsphinx_engine, recording_dir), amqp_url=MEDIA_AMQP_URL).start()
    try:
        dead = eventually(lambda: dead_letters(broker), timeout=90, what="a dead letter")
    finally:
        worker.stop()
    assert dead[0]["payload"] == {"path": "relative.wav"}
    assert worker.outcomes == [("?", "bad_job")]


def test_worker_survives_losing_the_broker_and_takes_jobs_published_meanwhile(
        broker, media_vhost, pocketsphinx_engine, speech, write_recording, recording_dir, call_record):
    worker = MediaWorker(_pipeline(pocketsphinx_engine, recording_dir), amqp_url=MEDIA_AMQP_URL,
                         backoff_seconds=(0.2, 0.5)).start()
    try:
        assert worker.ready.wait(10)
        assert close_vhost_connections(media_vhost) >= 1
        record = call_record()
        path = write_recording(speech["hello"])
        envelope = recording_event(record, path, stereo=False)
        # broker's view after its restart: the queue is durable, the job waits for a worker
        conn = pika.BlockingConnection(pika.URLParameters(MEDIA_AMQP_URL))
        publish(conn.channel(), envelope)
        conn.close()
        job = RecordingJob.from_envelope(envelope)
        eventually(lambda: status_of(job.id) == "transcribed", timeout=90, what="transcript after reconnect")
    finally:
        worker.stop()
    assert worker.connects >= 2


def _start_worker_process(tmp_path, name: str) -> subprocess.Popen:
    log = open(tmp_path / f"{name}.log", "wb")
    return subprocess.Popen([sys.executable, "-m", "app.cli", "media-worker"], cwd=REPO,
                            env=media_env(), stdout=log, stderr=subprocess.STDOUT)


@pytest.mark.timeout(300)
def test_worker_killed_mid_job_leaves_the_job_to_another_worker_and_nothing_is_duplicated(
        broker, speech, write_recording, recording_dir, call_record, tmp_path):
    set_value("recording.dir", str(recording_dir), announce=False)
    # 16 s of conversation: long enough (seconds of engine time) to kill the worker mid-job
    left = [(t, speech["angry"]) for t in (0, 8)]
    right = [(t + 4, speech["hello"]) for t in (0, 8)]
    record = call_record()
    path = write_recording(stereo_call(left, right, seconds=16))
    envelope = recording_event(record, path)
    job = RecordingJob.from_envelope(envelope)
    first = _start_worker_process(tmp_path, "first")
    second = None
    try:
        publish(broker, envelope)
        eventually(lambda: status_of(job.id) == "transcribing", timeout=60, what="job started")
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        assert status_of(job.id) == "transcribing"
        second = _start_worker_process(tmp_path, "second")
        eventually(lambda: status_of(job.id) == "transcribed", timeout=200, what="job redone")
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(15)
    with platform_session() as s:
        assert s.scalar(select(text("count(*)")).select_from(Transcript)
                        .where(Transcript.recording_id == job.id)) == 1
    assert count_events(job.id, "media.transcription.complete") == 1
    assert count_events(job.id, "sentiment.summary") == 1
    assert broker.queue_declare(QUEUE, passive=True).method.message_count == 0


class BuggyPipeline(Pipeline):
    def run(self, job, *, attempt=1):
        raise KeyError("a bug, not a bad file")


def test_a_bug_in_the_pipeline_is_bounded_then_failed_and_dead_lettered(
        broker, pocketsphinx_engine, speech, write_recording, recording_dir, call_record):
    record = call_record()
    path = write_recording(speech["hello"])
    envelope = recording_event(record, path, stereo=False)
    job = RecordingJob.from_envelope(envelope)
    publish(broker, envelope)
    pipeline = BuggyPipeline(pocketsphinx_engine, recording_dir=str(recording_dir),
                             call_record_wait_seconds=0, send_hook=lambda *a, **k: None)
    worker = MediaWorker(pipeline, sleep=lambda _s: None, amqp_url=MEDIA_AMQP_URL).start()
    try:
        eventually(lambda: status_of(job.id) == "failed", timeout=90, what="failed job")
        dead = eventually(lambda: dead_letters(broker), timeout=90, what="a dead letter")
    finally:
        worker.stop()
    assert [o for _, o in worker.outcomes][:-1] == ["retry"] * (limits.MEDIA_JOB_MAX_DELIVERIES - 1)
    with platform_session() as s:
        assert s.scalar(select(Recording.failure_reason).where(Recording.id == job.id)).startswith(
            "internal_error: KeyError")
    assert [d["payload"]["path"] for d in dead] == [str(path)]


@pytest.mark.timeout(180)
def test_sbc_workers_relays_the_verbs_event_runs_a_media_worker_and_stops_it_on_sigterm(
        broker, speech, write_recording, recording_dir, call_record, tmp_path):
    """The production path: the verb's event goes into the outbox, ``sbc workers`` relays it,
    its media-worker child transcribes, the results are relayed, SIGTERM stops both."""
    from app.events import payloads

    set_value("recording.dir", str(recording_dir), announce=False)
    record = call_record()
    path = write_recording(speech["hello"])
    envelope = recording_event(record, path, stereo=False)
    payloads.emit("media.recording.completed", envelope.payload, account_id=record.account_id,
                  trace_id=record.trace_id)
    job = RecordingJob.from_envelope(envelope)
    log = open(tmp_path / "workers.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "workers"], cwd=REPO,
                            env=media_env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        eventually(lambda: status_of(job.id) == "transcribed", timeout=120, what="transcript")

        def summary_published():
            with platform_session() as s:
                return s.scalar(text(
                    "SELECT published_at IS NOT NULL FROM event_outbox WHERE routing_key = "
                    "'sentiment.summary' AND body->'payload'->>'recordingId' = :r"), {"r": str(job.id)})
        eventually(summary_published, timeout=30, what="sentiment.summary relayed")
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                  text=True).stdout.split()
        assert len(children) == 1  # transcription.workers defaults to 1
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0
    assert not any(os.path.exists(f"/proc/{pid}") for pid in children)
