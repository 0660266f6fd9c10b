"""``sbc tenant``: provision a tenant (account + first admin) and administer it afterwards
(list, show, update licenses / name / concurrency limit, disable, enable) without SQL."""
from __future__ import annotations

import json

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


def _fail(exc: SbcError) -> None:
    click.echo(f"error: {exc.message}", err=True)
    raise SystemExit(1) from None


def _as_dict(view) -> dict:
    return {"id": str(view.id), "subdomain": view.subdomain, "name": view.name,
            "serviceProvider": view.service_provider, "licenses": list(view.licenses),
            "maxConcurrentCalls": view.max_concurrent_calls, "state": view.state,
            "disabledAt": view.disabled_at.isoformat() if view.disabled_at else None,
            "createdAt": view.created_at.isoformat(), "users": view.users,
            "phoneNumbers": view.phone_numbers}


def _limit(value: int) -> str:
    return "unlimited" if value == 0 else str(value)


@tenant.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array instead of a table.")
def list_(as_json: bool) -> None:
    """Every tenant: subdomain, state, concurrency limit, licenses."""
    from app.accounts.admin import list_tenants

    views = list_tenants()
    if as_json:
        click.echo(json.dumps([_as_dict(v) for v in views], indent=2))
        return
    click.echo(f"{'SUBDOMAIN':<24} {'STATE':<9} {'MAX CALLS':>9}  {'USERS':>5} {'NUMBERS':>7}  LICENSES")
    for v in views:
        click.echo(f"{v.subdomain:<24} {v.state:<9} {_limit(v.max_concurrent_calls):>9}  {v.users:>5} "
                   f"{v.phone_numbers:>7}  {','.join(v.licenses) or '-'}")


@tenant.command()
@click.argument("subdomain")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
def show(subdomain: str, as_json: bool) -> None:
    """One tenant in full."""
    from app.accounts.admin import show_tenant

    try:
        view = show_tenant(subdomain)
    except SbcError as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps(_as_dict(view), indent=2))
        return
    for key, value in _as_dict(view).items():
        if key == "maxConcurrentCalls":
            value = _limit(value)
        elif key == "licenses":
            value = ",".join(value) or "-"
        click.echo(f"{key:<20} {value}")


@tenant.command()
@click.argument("subdomain")
@click.option("--licenses", default=None,
              help="Replace the license set (comma-separated: api-access,queue-mgmt,programmable-voice; '' = none).")
@click.option("--max-concurrent-calls", default=None, type=click.IntRange(min=0),
              help="New concurrent-call limit; 0 = unlimited. Applies from the next call.")
@click.option("--name", default=None, help="New display name.")
def update(subdomain: str, licenses: str | None, max_concurrent_calls: int | None, name: str | None) -> None:
    """Change a tenant's licenses, concurrency limit or name (only what is given)."""
    from app.accounts.admin import update_tenant

    if licenses is None and max_concurrent_calls is None and name is None:
        raise click.UsageError("give at least one of --licenses, --max-concurrent-calls, --name")
    try:
        view = update_tenant(subdomain, licenses=licenses, name=name, max_concurrent_calls=max_concurrent_calls)
    except SbcError as exc:
        _fail(exc)
    click.echo(f"updated tenant {view.subdomain}: max_concurrent_calls={_limit(view.max_concurrent_calls)} "
               f"licenses=[{','.join(view.licenses)}] name={view.name}")


@tenant.command()
@click.argument("subdomain")
def disable(subdomain: str) -> None:
    """Disable a tenant: its users cannot log in or call the API, its numbers answer 404.
    Live calls continue; nothing is deleted (`sbc tenant enable` undoes it)."""
    from app.accounts.admin import set_disabled

    try:
        view = set_disabled(subdomain, True)
    except SbcError as exc:
        _fail(exc)
    click.echo(f"disabled tenant {view.subdomain} (since {view.disabled_at.isoformat()})")


@tenant.command()
@click.argument("subdomain")
def enable(subdomain: str) -> None:
    """Enable a disabled tenant again."""
    from app.accounts.admin import set_disabled

    try:
        view = set_disabled(subdomain, False)
    except SbcError as exc:
        _fail(exc)
    click.echo(f"enabled tenant {view.subdomain}")
