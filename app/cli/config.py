"""``sbc config``: read and change runtime configuration (``cluster_config``) on an air-gapped
deployment without SQL. ``set`` announces ``system.config.changed`` so running processes reload."""
from __future__ import annotations

import json
from typing import Any

import click


def _masked(key: str, value: Any) -> Any:
    """ESL passwords never reach a terminal or a log."""
    if key == "freeswitch.nodes" and isinstance(value, list):
        return [{**n, "password": "***"} if isinstance(n, dict) and "password" in n else n for n in value]
    return value


@click.group()
def config() -> None:
    """Runtime configuration (cluster_config)."""


@config.command("list")
def list_() -> None:
    """Every known key with its effective value; '*' marks keys stored in the database, '!'
    stored keys nothing reads."""
    from app.config import DEFAULTS, REFUSED, RuntimeConfig

    current = RuntimeConfig.load()
    stored = current.stored_keys()
    for key in sorted(DEFAULTS):
        mark = "*" if key in stored else " "
        click.echo(f"{mark} {key} = {json.dumps(_masked(key, current.get(key)))}")
    for key in sorted(stored - set(DEFAULTS)):
        reason = REFUSED.get(key, "unknown key")
        click.echo(f"! {key} is stored but ignored ({reason}); remove it with `sbc config unset {key}`")


@config.command()
@click.argument("key")
def get(key: str) -> None:
    """Print one key's effective value as JSON."""
    from app.config import DEFAULTS, RuntimeConfig

    if key not in DEFAULTS:
        raise click.ClickException(f"unknown key {key!r}; see `sbc config list`")
    click.echo(json.dumps(_masked(key, RuntimeConfig.load().get(key))))


@config.command("set")
@click.argument("key")
@click.argument("value")
def set_(key: str, value: str) -> None:
    """Store VALUE (JSON, e.g. 120, '"text"', '{"host": "0.0.0.0", "port": 8084}') for KEY."""
    from app.config import set_value
    from app.errors import SbcError

    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"value must be JSON: {exc.msg}") from exc
    try:
        set_value(key, parsed)
    except SbcError as exc:
        raise click.ClickException(exc.message) from exc
    click.echo(f"{key} stored; system.config.changed queued")


@config.command()
@click.argument("key")
def unset(key: str) -> None:
    """Remove KEY from the database: its default applies again (running processes reload)."""
    from app.config import unset_value
    from app.errors import SbcError

    try:
        removed = unset_value(key)
    except SbcError as exc:
        raise click.ClickException(exc.message) from exc
    if not removed:
        raise click.ClickException(f"{key} is not stored; nothing to unset")
    click.echo(f"{key} removed; its default applies; system.config.changed queued")
