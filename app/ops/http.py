"""``/healthz``, ``/readyz`` and ``/metrics`` over WSGI: a middleware in front of the API's Flask
app (no tenant host, no token: these paths never reach Flask) and a tiny gevent listener of
their own for the controller and the workers (cluster_config ``health.controller_port`` /
``health.workers_port``)."""
from __future__ import annotations

import json
import logging
from typing import Any, Callable, Iterable

from gevent.pywsgi import WSGIServer

from app.ops.health import Readiness
from app.ops.metrics import render

log = logging.getLogger(__name__)

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]
PATHS = ("/healthz", "/readyz", "/metrics")
_JSON = "application/json"


class OpsEndpoints:
    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness

    def respond(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
            return _send(start_response, "405 Method Not Allowed", _JSON,
                         _json({"status": 405, "code": "method_not_allowed", "message": "GET only."}),
                         extra=[("Allow", "GET, HEAD")])
        if path == "/healthz":
            return _send(start_response, "200 OK", _JSON, _json(self.readiness.liveness()))
        if path == "/readyz":
            try:
                ready, body = self.readiness.readiness()
            except Exception as exc:  # a check's own bug: a 503 an orchestrator reads, never a bare 500
                log.exception("%s: readiness check failed", self.readiness.process)
                ready, body = False, {"status": "not_ready", "process": self.readiness.process,
                                      "error": f"readiness check failed: {type(exc).__name__}"}
            return _send(start_response, "200 OK" if ready else "503 Service Unavailable", _JSON, _json(body))
        if path == "/metrics":
            payload, content_type = render()
            return _send(start_response, "200 OK", content_type, payload)
        return _send(start_response, "404 Not Found", _JSON,
                     _json({"status": 404, "code": "not_found", "message": f"Try {', '.join(PATHS)}."}))

    def middleware(self, app: WSGIApp) -> WSGIApp:
        """Serve the ops paths, pass everything else to ``app``."""
        def wrapped(environ: dict, start_response: Callable) -> Iterable[bytes]:
            if environ.get("PATH_INFO") in PATHS:
                return self.respond(environ, start_response)
            return app(environ, start_response)
        return wrapped


def start_ops_server(endpoints: OpsEndpoints, host: str, port: int) -> WSGIServer | None:
    """Listen in the background. Port 0 in the configuration means off (None is returned); a port
    that cannot be bound is logged as an ERROR and the process keeps serving calls: losing the
    health endpoint must not take calls down with it."""
    if not port:
        log.info("%s: health/metrics listener disabled", endpoints.readiness.process)
        return None
    server = WSGIServer((host, port), endpoints.respond, log=None)
    try:
        server.start()
    except OSError as exc:
        log.error("%s: cannot listen for /healthz /readyz /metrics on %s:%s (%s)",
                  endpoints.readiness.process, host, port, exc)
        return None
    log.info("%s: /healthz /readyz /metrics on http://%s:%s", endpoints.readiness.process, host,
             server.address[1])
    return server


def _json(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _send(start_response: Callable, status: str, content_type: str, body: bytes,
          extra: list[tuple[str, str]] | None = None) -> list[bytes]:
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body))),
                            ("Cache-Control", "no-store"), *(extra or [])])
    return [body]
