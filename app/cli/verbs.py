"""``sbc verbs``: check a verb list (or a flow) offline, print the verb language's JSON Schema.

Customers and support use ``validate`` on a captured webhook reply to see exactly why the
controller refused it — the same parser the controller runs, so the answer is the same.
"""
from __future__ import annotations

import json
import sys
from typing import Any, TextIO

import click

from app.errors import ValidationFailed
from app.verbs import VerbListRejected, parse_verb_list
from app.verbs.errors import format_error


def _read_json(stream: TextIO) -> Any:
    text = stream.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc


@click.group()
def verbs() -> None:
    """The verb language of webhook replies, app_json and flows."""


@verbs.command()
@click.argument("file", type=click.File("r"))
@click.option("--flow", "as_flow", is_flag=True, help="FILE is a stored call flow, not a verb list.")
def validate(file: TextIO, as_flow: bool) -> None:
    """Validate FILE (``-`` for stdin). Exit 0 when accepted, 1 when rejected."""
    data = _read_json(file)
    if as_flow:
        from app.flows import validate_flow

        try:
            flow = validate_flow(data)
        except ValidationFailed as exc:
            click.echo(f"rejected: {len(exc.details)} error(s)")
            for err in exc.details:
                where = " ".join(str(x) for x in (err.get("node"), err.get("field")) if x)
                click.echo(f"  {where}: {err['message']}" if where else f"  {err['message']}")
            sys.exit(1)
        click.echo(f"accepted: flow with {len(flow.nodes)} node(s), start {flow.start!r}")
        return
    try:
        result = parse_verb_list(data)
    except VerbListRejected as exc:
        click.echo(f"rejected: {len(exc.errors)} error(s)")
        for err in exc.errors:
            click.echo(f"  {format_error(err)}")
        sys.exit(1)
    click.echo(f"accepted: {len(result)} verb(s): {', '.join(v.name for v in result)}")
    for warning in result.warnings:
        click.echo(f"  warning {format_error(warning)}")


@verbs.command()
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of a verb list."""
    from app.verbs.jsonschema import verb_list_json_schema

    click.echo(json.dumps(verb_list_json_schema(), indent=2, sort_keys=False))
