"""``sbc api``: serve the REST API on gevent's WSGI server.

gevent.pywsgi rather than a pre-fork server: the process is already monkey-patched (app.cli
patches first), every request is a greenlet, and psycopg2 yields through psycogreen, so one
process serves many concurrent slow clients. Scale out with more processes behind the load
balancer (or run ``gunicorn -k gevent 'app.api:create_app()'``); the API keeps no local state.
"""
from __future__ import annotations

import contextlib
import logging
import signal
import socket

import click
from gevent.pywsgi import WSGIHandler, WSGIServer


class ApiHandler(WSGIHandler):
    """After an agent channel's WebSocket (app/agent_channel/server.py) the TCP connection
    carried a WebSocket, not HTTP: close it rather than read the next request from it."""

    def run_application(self) -> None:
        try:
            super().run_application()
        finally:
            if self.environ.get("sbc.agent_channel.done"):
                self.close_connection = True


class NoDelayWSGIServer(WSGIServer):
    """pywsgi sends the status+headers and the body in two writes; with Nagle on, the body waits
    for the client's delayed ACK (~40 ms per keep-alive request). Disable Nagle per connection."""

    handler_class = ApiHandler

    def handle(self, sock, address):  # noqa: ANN001 - gevent's signature
        with contextlib.suppress(OSError):  # not TCP (e.g. a UNIX socket): nothing to tune
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return super().handle(sock, address)


@click.command("api")
@click.option("--host", default=None, envvar="SBC_API_HOST",
              help="Address to bind [default: 0.0.0.0; 127.0.0.1 while the built-in development "
                   "JWT secret is in use, which is refused on any other address].")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535),
              envvar="SBC_API_PORT", help="TCP port to bind.")
@click.option("--access-log/--no-access-log", default=True, show_default=True,
              help="One line per request on stderr.")
def api(host: str | None, port: int, access_log: bool) -> None:
    """Serve the REST API (/auth/*, /api/*, /api/openapi.json)."""
    import gevent

    from app.api.app import create_app
    from app.api.bind_guard import LOOPBACK_HOST, DevSecretExposed, dev_secret_in_use
    from app.gc_tuning import freeze_startup_heap
    from app.logging_setup import configure_logging

    configure_logging()
    if host is None:
        host = LOOPBACK_HOST if dev_secret_in_use() else "0.0.0.0"
        if dev_secret_in_use():
            click.echo("sbc api: built-in development JWT secret in use: listening on "
                       f"{LOOPBACK_HOST} only (set SBC_JWT_SECRET to serve other interfaces)", err=True)
    try:
        app = create_app(bind_host=host)
    except DevSecretExposed as exc:
        raise click.ClickException(str(exc)) from None
    # access and error lines through logging, so they carry the process name and pid too
    server = NoDelayWSGIServer((host, port), app,
                               log=logging.getLogger("sbc.access") if access_log else None,
                               error_log=logging.getLogger("sbc.wsgi"))

    def _stop() -> None:
        channel = app.extensions.get("agent_channel")
        if channel is not None:  # agent sockets never finish by themselves: close them (1001)
            channel.stop()
        live = app.extensions.get("live_view")
        if live is not None:  # nor do the live view's streams: end them (the pages reconnect)
            live.stop()
        server.stop(timeout=5)  # finish in-flight requests, then exit

    gevent.signal_handler(signal.SIGTERM, _stop)
    gevent.signal_handler(signal.SIGINT, _stop)
    click.echo(f"sbc api listening on http://{host}:{port}", err=True)
    freeze_startup_heap()
    server.serve_forever()
