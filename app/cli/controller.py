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

    from app.db.engine import share_pools
    from app.voice.controller import Controller

    # the N siblings share the database's connections: each child's pools are 1/N of one
    # process's (app/db/engine.py shared_pool_limits; docs/operations.md)
    share_pools(processes)
    ctl = Controller(process_index=process_index or 0, processes=processes)
    ctl.start()
    stopping = gevent.event.Event()
    gevent.signal_handler(signal.SIGTERM, stopping.set)
    gevent.signal_handler(signal.SIGINT, stopping.set)
    stopping.wait()
    ctl.stop()


def _supervise(processes: int) -> None:
    """Run the siblings as children (app/cli/supervisor.py: restarted with backoff when one
    dies; its calls are then recovered by its successor like any lost controller's), and
    answer /readyz for them all on ``health.controller_port`` (app/ops/children.py)."""
    from app.cli.supervisor import Child, Supervisor, run_until_signalled

    supervisor = Supervisor([
        Child(f"controller-{i}", [sys.executable, "-m", "app.cli", "controller",
                                  "--processes", str(processes), "--process-index", str(i)])
        for i in range(processes)])
    ops_server = _serve_children_readiness(supervisor, processes)
    try:
        run_until_signalled(supervisor, "controller")
    finally:
        if ops_server is not None:
            ops_server.stop(timeout=1)


def _serve_children_readiness(supervisor, processes: int):
    """/healthz /readyz /metrics of the supervising process: /readyz is 200 only when all N
    children are ready. The configuration is read once, as each child reads it at start; if
    it cannot be read the children still run (they retry on their own), only this listener
    is missing, and the log says so."""
    import logging

    from app.config import RuntimeConfig
    from app.ops.children import ChildrenReadiness, ChildView, child_ops_port
    from app.ops.http import OpsEndpoints, start_ops_server

    try:
        config = RuntimeConfig.load()
        host, base = config.controller_listen[0], config.health_controller_port
    except Exception as exc:  # database away at start: supervise anyway
        logging.getLogger("sbc.controller").error(
            "controller-supervisor: configuration unreadable (%s); no /readyz for the %d "
            "processes", exc, processes)
        return None
    probe_host = "127.0.0.1" if host in ("0.0.0.0", "") else host

    def children() -> list[ChildView]:
        return [ChildView(child.name, index,
                          f"http://{probe_host}:{child_ops_port(base, index, processes)}",
                          None if child.restart_at is not None or child.proc is None
                          else child.proc.pid, child.restarts)
                for index, child in enumerate(supervisor.children)]

    return start_ops_server(OpsEndpoints(ChildrenReadiness("controller-supervisor", children)),
                            host, base)
