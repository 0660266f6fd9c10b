"""``sbc api``: serve the REST API on gevent's WSGI server.

gevent.pywsgi rather than a pre-fork server: the process is already monkey-patched (app.cli
patches first), every request is a greenlet, and psycopg2 yields through psycogreen, so one
process serves many concurrent slow clients. Scale out with more processes behind the load
balancer (or run ``gunicorn -k gevent 'app.api:create_app()'``); the API keeps no local state.
"""
from __future__ import annotations

import contextlib
import signal
import socket

import click
from gevent.pywsgi import WSGIServer


class NoDelayWSGIServer(WSGIServer):
    """pywsgi sends the status+headers and the body in two writes; with Nagle on, the body waits
    for the client's delayed ACK (~40 ms per keep-alive request). Disable Nagle per connection."""

    def handle(self, sock, address):  # noqa: ANN001 - gevent's signature
        with contextlib.suppress(OSError):  # not TCP (e.g. a UNIX socket): nothing to tune
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return super().handle(sock, address)


@click.command("api")
@click.option("--host", default="0.0.0.0", show_default=True, envvar="SBC_API_HOST",
              help="Address to bind.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535),
              envvar="SBC_API_PORT", help="TCP port to bind.")
@click.option("--access-log/--no-access-log", default=True, show_default=True,
              help="One line per request on stderr.")
def api(host: str, port: int, access_log: bool) -> None:
    """Serve the REST API (/auth/*, /api/*, /api/openapi.json)."""
    import gevent

    from app.api.app import create_app

    from app.logging_setup import configure_logging


    configure_logging()
    server = NoDelayWSGIServer((host, port), create_app(), log="default" if access_log else None)

    def _stop() -> None:
        server.stop(timeout=5)  # finish in-flight requests, then exit

    gevent.signal_handler(signal.SIGTERM, _stop)
    gevent.signal_handler(signal.SIGINT, _stop)
    click.echo(f"sbc api listening on http://{host}:{port}", err=True)
    server.serve_forever()
