"""Request bodies over ``max_bytes`` are 413 whatever the transfer encoding.

Werkzeug enforces ``MAX_CONTENT_LENGTH`` against the ``Content-Length`` header, but a chunked
body has none: it wraps the stream in a limit and ``request.get_data()`` then returns the first
``max_bytes`` bytes *silently truncated* (the 413 is raised only by a read past the limit, which
``get_data`` never makes). A 2 MiB chunked JSON body thus reached the decoder cut in half. This
WSGI middleware reads a chunked body up to ``max_bytes + 1`` bytes before the app sees it:
over the cap it answers 413 in the API's error shape (and closes the connection, the rest of
the body unread); within it the app gets the body with a ``Content-Length``, so one code path
(werkzeug's) applies to every request. An upload route of ``app.api.raw_uploads`` (its method,
path and content type) has its own cap instead."""
from __future__ import annotations

import io
import json
from typing import Any, Callable, Iterable

from app.api.raw_uploads import raw_upload

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
READ_SIZE = 64 * 1024
TOO_LARGE = {"code": "payload_too_large",
             "message": "The data value transmitted exceeds the capacity limit."}


class BodyLimit:
    def __init__(self, app: WSGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("CONTENT_LENGTH") or "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            return self.app(environ, start_response)
        upload = raw_upload(environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""),
                            environ.get("CONTENT_TYPE", ""))
        max_bytes = upload.max_bytes if upload is not None else self.max_bytes
        stream, body = environ["wsgi.input"], bytearray()
        while len(body) <= max_bytes:
            chunk = stream.read(min(READ_SIZE, max_bytes + 1 - len(body)))
            if not chunk:
                break
            body += chunk
        if len(body) > max_bytes:
            payload = json.dumps(TOO_LARGE).encode()
            start_response("413 Request Entity Too Large", [
                ("Content-Type", "application/json"), ("Content-Length", str(len(payload))),
                ("Connection", "close")])
            return [payload]
        environ["wsgi.input"] = io.BytesIO(bytes(body))
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        return self.app(environ, start_response)
