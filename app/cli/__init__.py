"""The ``sbc`` console script. Sub-commands live one concept per module and are registered
explicitly below."""
from app.gevent_setup import patch

patch()

import click  # noqa: E402

from app.cli import api as api_cli  # noqa: E402
from app.cli import config as config_cli  # noqa: E402
from app.cli import controller as controller_cli  # noqa: E402
from app.cli import db as db_cli  # noqa: E402
from app.cli import lcr as lcr_cli  # noqa: E402
from app.cli import media_worker as media_worker_cli  # noqa: E402
from app.cli import run as run_cli  # noqa: E402
from app.cli import status as status_cli  # noqa: E402
from app.cli import tenant as tenant_cli  # noqa: E402
from app.cli import verbs as verbs_cli  # noqa: E402
from app.cli import webhook as webhook_cli  # noqa: E402
from app.cli import workers as workers_cli  # noqa: E402


@click.group()
def main() -> None:
    """SaaS-SBC control commands."""


main.add_command(db_cli.db)
main.add_command(api_cli.api)
main.add_command(tenant_cli.tenant)
main.add_command(verbs_cli.verbs)
main.add_command(webhook_cli.webhook)
main.add_command(lcr_cli.lcr)
main.add_command(controller_cli.controller)
main.add_command(workers_cli.workers)
main.add_command(media_worker_cli.media_worker)
main.add_command(run_cli.run)
main.add_command(config_cli.config)
main.add_command(status_cli.status)
