"""The web console (``web/``, issue 22) served by ``sbc api`` on the same origin as ``/api`` and
``/auth``: no CORS, no CDN, and the tenant is the host name the browser already uses.

``web/`` is built by ``scripts/install`` (``npm ci`` + ``vite build``) into ``static/`` beside
this file, so the wheel carries the built files (setup.cfg package data) and ``pip install``
serves the console without node. Everything lives under ``/console/``: nothing here can shadow
an API, auth or health route. Paths under ``/console/assets/`` are the build's hashed files
(cached for a year); every other path under ``/console/`` is the single page (the browser-side
router shows the screen), never cached, with a strict Content-Security-Policy.
"""
from __future__ import annotations

import gzip
import mimetypes
from functools import lru_cache
from pathlib import Path

from flask import Blueprint, Response, redirect, request, send_from_directory
from werkzeug.security import safe_join

from app.errors import NotFound

CONSOLE_PATH = "/console"
STATIC_DIR = Path(__file__).parent / "static"
ASSETS_DIR = STATIC_DIR / "assets"
# media-src blob: the recording player plays audio fetched with the Bearer token (an <audio src>
# cannot send a header); img-src data: the MFA enrolment QR code the API hands out as a data URI
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "media-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
       "form-action 'self'")
IMMUTABLE = "public, max-age=31536000, immutable"
# Text assets are sent gzipped to a browser that accepts it (every one does): the first page's
# JavaScript shrinks about 3x, and no reverse proxy is needed for that. Each file is compressed
# once per process (the names are content hashes, so a file never changes under its name).
COMPRESSIBLE = (".js", ".css", ".svg", ".json")
GZIP_LEVEL = 9
GZIP_CACHE_FILES = 64

blp = Blueprint("console", __name__)


def _not_built() -> NotFound:
    return NotFound("The console is not built here: run bash scripts/install (npm ci and the build in web/).",
                    code="console_not_built")


@blp.get("/")
def root() -> Response:
    """The bare host name opens the console (the API, auth and health routes keep their paths)."""
    return redirect(CONSOLE_PATH + "/", code=302)


@blp.get(CONSOLE_PATH)
def console_no_slash() -> Response:
    return redirect(CONSOLE_PATH + "/", code=301)


@lru_cache(maxsize=GZIP_CACHE_FILES)
def _gzipped(path: str, mtime_ns: int) -> bytes:
    """``mtime_ns`` is part of the key: a rebuilt file is compressed again."""
    return gzip.compress(Path(path).read_bytes(), compresslevel=GZIP_LEVEL, mtime=0)


@blp.get(CONSOLE_PATH + "/assets/<path:name>")
def asset(name: str) -> Response:
    if not ASSETS_DIR.is_dir():
        raise _not_built()
    target = safe_join(str(ASSETS_DIR), name)  # None for any path that leaves assets/
    if target is not None and name.endswith(COMPRESSIBLE) and "gzip" in request.accept_encodings \
            and Path(target).is_file():
        response = Response(_gzipped(target, Path(target).stat().st_mtime_ns),
                            mimetype=mimetypes.guess_type(name)[0] or "application/octet-stream")
        response.headers["Content-Encoding"] = "gzip"
    else:
        response = send_from_directory(ASSETS_DIR, name)  # 404 for a missing or outside path
    response.headers["Vary"] = "Accept-Encoding"
    response.headers["Cache-Control"] = IMMUTABLE
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@blp.get(CONSOLE_PATH + "/", defaults={"_screen": ""})
@blp.get(CONSOLE_PATH + "/<path:_screen>")
def page(_screen: str) -> Response:
    """Any screen's address answers the one page; its router reads the path."""
    index = STATIC_DIR / "index.html"
    if not index.is_file():
        raise _not_built()
    response = Response(index.read_bytes(), mimetype="text/html")
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-cache"
    return response
