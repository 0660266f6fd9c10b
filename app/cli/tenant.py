"""``sbc tenant create``: provision a tenant (account + first admin) from the command line."""
from __future__ import annotations

import click

from app.errors import SbcError


@click.group()
def tenant() -> None:
    """Tenants (accounts)."""


@tenant.command()
@click.option("--subdomain", required=True, help="DNS label the tenant is reached at: <subdomain>.<base domain>.")
@click.option("--admin-user", required=True, help="User name of the first administrator.")
@click.option(
    "--admin-password",
    envvar="SBC_ADMIN_PASSWORD",
    prompt=True,
    hide_input=True,
    help="Password of the first administrator (at least 8 characters); prompted for when "
    "omitted, or read from SBC_ADMIN_PASSWORD, so it need not appear in the process list.",
)
@click.option("--licenses", default="", help="Comma-separated: api-access,queue-mgmt,programmable-voice.")
@click.option("--name", default=None, help="Display name (defaults to the subdomain).")
@click.option("--max-concurrent-calls", default=0, type=click.IntRange(min=0), show_default=True,
              help="Concurrent-call limit for the account; 0 = unlimited.")
def create(subdomain: str, admin_user: str, admin_password: str, licenses: str, name: str | None,
           max_concurrent_calls: int) -> None:
    """Create a tenant and its admin user (all permissions)."""
    from app.accounts.service import create_tenant

    try:
        account = create_tenant(
            subdomain, admin_user, admin_password, licenses,
            name=name, max_concurrent_calls=max_concurrent_calls,
        )
    except SbcError as exc:
        click.echo(f"error: {exc.message}", err=True)
        raise SystemExit(1) from None
    click.echo(
        f"created tenant {account.subdomain} (account {account.id}) "
        f"licenses=[{','.join(account.licenses)}] admin={admin_user.strip()}"
    )
