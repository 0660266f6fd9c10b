"""``sbc run``: the main job — migrate, then API, controller and workers as child processes.

Separate processes (not greenlets in one) so a crash or a CPU-bound burst in one part cannot
stall the others, exactly as they run in docker-compose. This command supervises them
(app/cli/supervisor.py): a child that dies is restarted with backoff while the others keep
serving; only a child that keeps crashing right after start makes ``run`` stop everything and
exit non-zero, so a service manager and the operator see it.
"""
from __future__ import annotations

import sys

import click

from app.cli.supervisor import Child, Supervisor, run_until_signalled

CHILDREN = (("api",), ("controller",), ("workers",))


@click.command("run")
@click.option("--api-port", default=8080, show_default=True, envvar="SBC_API_PORT")
def run(api_port: int) -> None:
    """Apply migrations, then run API + controller + workers until stopped."""
    from app.db.migrate import ensure_database, upgrade
    from app.logging_setup import configure_logging

    configure_logging()
    ensure_database()
    upgrade()
    click.echo("database is at the latest migration")
    children = []
    for args in CHILDREN:
        extra = ["--port", str(api_port)] if args == ("api",) else []
        children.append(Child(args[0], [sys.executable, "-m", "app.cli", *args, *extra]))
    supervisor = Supervisor(children)
    run_until_signalled(supervisor, "run")
