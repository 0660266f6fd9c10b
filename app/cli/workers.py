"""``sbc workers``: background work that belongs to no request and no call.

* The event relay: every process writes its events to the PostgreSQL outbox, and this process
  relays what others leave there (the API has no relay of its own; a controller that died
  before relaying leaves rows behind) to RabbitMQ. Several relays are safe: rows are claimed
  with ``FOR UPDATE SKIP LOCKED``.
* The callback dispatcher (app/contact/callbacks.py): pending queue callbacks are dialled when
  an agent of their queue becomes available, and by a sweep every few seconds. Several
  ``sbc workers`` are safe (row locks with skip, the atomic agent claim).
* The campaign dialer (app/campaigns/dialer.py): paces every running campaign it holds the
  lease of, dials through ``call.originate`` and applies each call's outcome to its contact.
  Several ``sbc workers`` are safe (the lease per campaign, ``SKIP LOCKED`` picking, the
  atomic agent claim); a dead one's campaigns are taken over when its leases lapse.
* The media pipeline (recording → transcription → sentiment, app/media): this process checks
  the configured engine's model, then starts ``transcription.workers`` ``sbc media-worker``
  child processes and restarts any that dies (app/cli/supervisor.py). A model that is missing
  or unusable stops ``sbc workers`` at start-up with the setting to fix.
"""
from __future__ import annotations

import signal
import sys

import click


@click.command("workers")
def workers() -> None:
    """Relay the event outbox, dispatch callbacks, dial campaigns, run the media workers, announce the service."""
    import gevent

    from app.cli.supervisor import Child, GaveUp, Supervisor
    from app.config import get_config
    from app.logging_setup import configure_logging
    from app.media.engines import ModelUnavailable, check_engine
    from app.ops.runtime import WorkersRuntime

    configure_logging()
    config = get_config()
    try:
        check_engine(config)
    except ModelUnavailable as exc:
        raise click.ClickException(
            f"cannot start the {config.transcription_engine} transcription engine: "
            f"set {exc.setting} ({exc.reason})") from None
    runtime = WorkersRuntime().start()  # relay, heartbeat, /healthz /readyz /metrics
    from app.contact.callbacks import CallbackDispatcher
    from app.contact.states import default_presence

    dispatcher = CallbackDispatcher(default_presence()).start()
    dialer = start_dialer()
    media = Supervisor([Child(f"media-worker-{n}", [sys.executable, "-m", "app.cli", "media-worker"])
                        for n in range(1, config.transcription_workers + 1)])
    stopping = gevent.event.Event()
    failed: list[str] = []

    def supervise() -> None:
        try:
            media.run()
        except GaveUp as exc:
            failed.append(str(exc))
            stopping.set()

    supervisor = gevent.spawn(supervise)
    gevent.signal_handler(signal.SIGTERM, stopping.set)
    gevent.signal_handler(signal.SIGINT, stopping.set)
    stopping.wait()
    media.stopping = True
    supervisor.join()
    dialer.stop()
    dispatcher.stop()
    runtime.stop()
    if failed:
        raise click.ClickException(f"media workers stopped: {failed[0]}")


def start_dialer():  # noqa: ANN201 (app.campaigns.dialer.CampaignDialer, imported late like the rest)
    """The campaign dialer with this process's own lease holder id (host and pid)."""
    import os
    import socket

    from app.calls.limiter import ConcurrencyLimiter
    from app.campaigns.dialer import CampaignDialer
    from app.campaigns.lease import CampaignLeases
    from app.contact.states import default_presence

    presence = default_presence()
    leases = CampaignLeases(presence.redis, presence.prefix, f"{socket.gethostname()}:{os.getpid()}")
    return CampaignDialer(presence, leases, ConcurrencyLimiter(presence.redis)).start()
