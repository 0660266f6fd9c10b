"""``sbc controller``: the call controller (outbound ESL server + FreeSWITCH node links)."""
from __future__ import annotations

import signal

import click


@click.command("controller")
def controller() -> None:
    """Serve FreeSWITCH's outbound sockets and keep the inbound ESL links up."""
    import gevent

    from app.controller import Controller

    from app.logging_setup import configure_logging


    configure_logging()
    ctl = Controller()
    ctl.start()
    stopping = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stopping.set)
    gevent.signal_handler(signal.SIGINT, stopping.set)
    stopping.wait()
    ctl.stop()
