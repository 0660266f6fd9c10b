"""``sbc webhook try URL``: the first webhook request of a call, sent to the developer's
server, and what the call would do with the reply (app/verbs/trial.py, shared with the API's
``POST /api/applications/:id/try``)."""
from __future__ import annotations

import json
import sys
from typing import Optional

import click

from app.verbs import trial as webhook_try


@click.group()
def webhook() -> None:
    """Try a webhook application before any phone rings."""


@webhook.command("try")
@click.argument("url")
@click.option("--from", "from_number", default="15550100001", show_default=True, help="Caller number.")
@click.option("--to", "to_number", default="15550100002", show_default=True, help="Called number.")
@click.option("--direction", type=click.Choice(["inbound", "outbound"]), default="inbound",
              show_default=True, help="outbound: a leg placed with POST /api/calls (callStatus in-progress).")
@click.option("--method", type=click.Choice(["POST", "GET"]), default="POST", show_default=True)
@click.option("--secret", envvar="SBC_WEBHOOK_SECRET", default=None,
              help="Signing secret: X-Signature as the platform sends it (or SBC_WEBHOOK_SECRET).")
@click.option("--basic-auth", "basic_auth", default=None, metavar="USER:PASSWORD",
              help="Basic authentication, as set on the application.")
@click.option("--account-sid", default=webhook_try.TEST_ACCOUNT_SID, show_default=True)
@click.option("--application-sid", default=webhook_try.TEST_APPLICATION_SID, show_default=True)
def try_(url: str, from_number: str, to_number: str, direction: str, method: str,
         secret: Optional[str], basic_auth: Optional[str], account_sid: str, application_sid: str) -> None:
    """Send the first request of a test call to URL, validate the reply, print the steps.
    Exit 0 when the call would run the reply, 1 when it is rejected, 2 when URL failed."""
    body = webhook_try.test_request_body(from_number=from_number, to_number=to_number,
                                      direction=direction, account_sid=account_sid,
                                      application_sid=application_sid)
    auth = None
    if basic_auth is not None:
        user, sep, password = basic_auth.partition(":")
        if not sep:
            raise click.BadParameter("use USER:PASSWORD", param_hint="--basic-auth")
        auth = (user, password)
    click.echo(f"{method} {url}" + ("  (signed: X-Signature)" if secret else ""))
    click.echo(json.dumps(body, indent=2))
    result = webhook_try.try_hook(url, method, body, secret=secret, basic_auth=auth)
    if result.failure is not None:
        exc = result.failure
        click.echo(webhook_try.failure_line(exc.reason, exc.attempts, exc.detail, exc.last_status))
        hint = webhook_try.failure_hint(exc.reason, exc.detail, url)
        if hint:
            click.echo(f"hint: {hint}")
        sys.exit(2)
    click.echo(f"reply in {result.elapsed_ms:.0f} ms")
    verdict = result.verdict
    if not verdict.accepted:
        click.echo(f"rejected: {len(verdict.errors)} error(s) — the call would not run this reply")
        for error in verdict.errors:
            click.echo(f"  {error}")
        sys.exit(1)
    click.echo("accepted; the call would:")
    for number, step in enumerate(verdict.steps, 1):
        click.echo(f"  {number}. {step}")
    for warning in verdict.warnings:
        click.echo(f"  warning {warning}")
