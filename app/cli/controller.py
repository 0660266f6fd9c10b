"""``sbc controller``: the call controller (outbound ESL server + FreeSWITCH node links).

``--processes N`` (or ``SBC_CONTROLLER_PROCESSES``; default 1): one gevent process runs out of
CPU well under 100 calls/s (docs/trunks.md), so N full controllers run as supervised child
processes on the same outbound socket port (SO_REUSEPORT: the kernel spreads the switch's
sockets) and share which calls each drives (app/calls/siblings.py). With 1 nothing changes.
"""
from __future__ import annotations

import signal
import sys
from typing import Optional

import click

from app import limits


@click.command("controller")
@click.option("--processes", type=click.IntRange(1, limits.CONTROLLER_MAX_PROCESSES), default=1,
              show_default=True, envvar="SBC_CONTROLLER_PROCESSES",
              help="Controller processes sharing the outbound socket port.")
@click.option("--process-index", type=int, default=None, hidden=True)
def controller(processes: int, process_index: Optional[int]) -> None:
    """Serve FreeSWITCH's outbound sockets and keep the inbound ESL links up."""
    from app.logging_setup import configure_logging

    configure_logging()
    if processes > 1 and process_index is None:
        _supervise(processes)
        return
    import gevent

    from app.voice.controller import Controller

    ctl = Controller(process_index=process_index or 0, processes=processes)
    ctl.start()
    stopping = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stopping.set)
    gevent.signal_handler(signal.SIGINT, stopping.set)
    stopping.wait()
    ctl.stop()


def _supervise(processes: int) -> None:
    """Run the siblings as children (app/cli/supervisor.py: restarted with backoff when one
    dies; its calls are then recovered by its successor like any lost controller's)."""
    from app.cli.supervisor import Child, Supervisor, run_until_signalled

    supervisor = Supervisor([
        Child(f"controller-{i}", [sys.executable, "-m", "app.cli", "controller",
                                  "--processes", str(processes), "--process-index", str(i)])
        for i in range(processes)])
    run_until_signalled(supervisor, "controller")
