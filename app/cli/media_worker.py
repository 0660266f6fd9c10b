"""``sbc media-worker``: one transcription worker process (``sbc workers`` starts
``transcription.workers`` of them and restarts any that dies).

The engine's model is loaded once here, before the first job: a missing or unusable model is a
start-up error naming the ``cluster_config`` setting to fix (exit status 2), never a failure per
job. A separate process per worker because transcription is CPU-bound native code: it would
stall every greenlet of the process it ran in (the event relay included).
"""
from __future__ import annotations

import signal
import sys

import click


@click.command("media-worker")
def media_worker() -> None:
    """Consume media.recording.completed: transcribe, score sentiment, notify."""
    import gevent

    from app.config import get_config
    from app.events.envelope import set_service_name
    from app.logging_setup import configure_logging
    from app.media.engines import ModelUnavailable, load_engine
    from app.media.hooks import post_signed
    from app.media.pipeline import Pipeline
    from app.media.worker import MediaWorker

    configure_logging()
    set_service_name("workers")
    config = get_config()
    try:
        engine = load_engine(config)
    except ModelUnavailable as exc:
        click.echo(f"sbc media-worker: cannot start the {config.transcription_engine} engine: "
                   f"set {exc.setting} ({exc.reason})", err=True)
        sys.exit(2)
    pipeline = Pipeline(engine, recording_dir=config.recording_dir, send_hook=post_signed)
    worker = MediaWorker(pipeline).start()
    stopping = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stopping.set)
    gevent.signal_handler(signal.SIGINT, stopping.set)
    stopping.wait()
    worker.stop()
