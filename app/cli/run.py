"""``sbc run``: the main job — migrate, then API, controller and workers as child processes.

Separate processes (not greenlets in one) so a crash or a CPU-bound burst in one part cannot
stall the others, exactly as they run in docker-compose; this command only supervises them:
if one exits, the rest are stopped and ``run`` exits non-zero so a service manager restarts it.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import click

CHILDREN = (("api",), ("controller",), ("workers",))


@click.command("run")
@click.option("--api-port", default=8080, show_default=True, envvar="SBC_API_PORT")
def run(api_port: int) -> None:
    """Apply migrations, then run API + controller + workers until stopped."""
    from app.db.migrate import ensure_database, upgrade

    ensure_database()
    upgrade()
    click.echo("database is at the latest migration")
    procs = []
    for args in CHILDREN:
        extra = ["--port", str(api_port)] if args == ("api",) else []
        procs.append(subprocess.Popen([sys.executable, "-m", "app.cli", *args, *extra]))

    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping and all(p.poll() is None for p in procs):
        time.sleep(0.5)
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    failed = [p.args[3] for p in procs if p.returncode not in (0, -signal.SIGTERM)]
    if failed and not stopping:
        raise click.ClickException(f"stopped because {', '.join(failed)} exited")
