"""``sbc status``: one screen — switches, services by heartbeat, outbox backlog, calls in
progress per account (app/ops/status.py says where each figure comes from)."""
from __future__ import annotations

import dataclasses
import json

import click


@click.command("status")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of the text screen.")
def status(as_json: bool) -> None:
    """Show switches, controllers and workers, outbox backlog and live calls per account."""
    from app.config import RuntimeConfig
    from app.ops.status import gather, render

    try:
        config, unreadable = RuntimeConfig.load(), None
    except Exception as exc:  # PostgreSQL down: still show what the switches and Redis say
        config, unreadable = RuntimeConfig(), f"PostgreSQL (cluster_config, defaults used): {exc}"
    result = gather(config)
    if unreadable:
        result.errors.insert(0, unreadable)
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(result), indent=2, default=str))
    else:
        click.echo(render(result))
    if result.errors or not any(s.connected for s in result.switches):
        raise SystemExit(1)
