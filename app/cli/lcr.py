"""``sbc lcr explain NUMBER --account SUBDOMAIN``: the route a dial would take, and why."""
from __future__ import annotations

import json
import sys

import click

from app.errors import SbcError


@click.group()
def lcr() -> None:
    """Least-cost routing tools."""


@lcr.command()
@click.argument("number")
@click.option("--account", "subdomain", required=True, help="Tenant subdomain whose view to explain.")
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
def explain(number: str, subdomain: str, as_json: bool) -> None:
    """Explain how NUMBER would be routed for the account."""
    from app.routing.explain import explain_for_subdomain

    try:
        result, health_known = explain_for_subdomain(number, subdomain)
    except SbcError as exc:
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(2)
    data = result.to_dict()
    data["gatewayHealthKnown"] = health_known
    if as_json:
        click.echo(json.dumps(data, indent=2))
        sys.exit(0 if result.routable else 1)
    click.echo(f"number      {result.number} -> {result.normalized or '(not a phone number)'}")
    click.echo(f"plans       {', '.join(result.plans_considered) or '(none)'}")
    if result.plan_id is not None:
        click.echo(f"plan        {result.plan_name} ({result.plan_level})")
        click.echo(f"route       {result.route_regex}")
    for i, attempt in enumerate(result.attempts, 1):
        click.echo(f"try {i:<2}      {attempt.carrier_name} via {attempt.gateway_name} ({attempt.host}) "
                   f"dial {attempt.dial_number}")
    for skipped in result.skipped:
        click.echo(f"skipped     {skipped.kind} {skipped.name}: {skipped.reason}")
    if not health_known:
        click.echo("note        gateway health (Redis) unavailable: down gateways not excluded")
    if result.attempts:
        click.echo(f"bridge      {data['bridge']}")
    else:
        click.echo(f"unroutable  {result.reason}")
        sys.exit(1)
