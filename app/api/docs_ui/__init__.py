"""Interactive API documentation at ``/api/docs``, served offline.

Swagger UI's files come from the pinned PyPI package ``swagger-ui-bundle`` (setup.cfg), not a
CDN: the page works on a machine without internet access and loads nothing from third parties.
The page and its small initializer are ours (``page.html``, ``init.js``) so no inline script is
needed and a strict Content-Security-Policy holds. Public like ``/api/openapi.json``: it reads
no tenant data; "Try it out" sends the caller's own token or API key to this same host.
"""
from __future__ import annotations

from pathlib import Path

import swagger_ui_bundle
from flask import Blueprint, Response, send_from_directory

from app.errors import NotFound

DOCS_PATH = "/api/docs"
ASSETS_PREFIX = DOCS_PATH + "/assets/"
_HERE = Path(__file__).parent
_VENDOR = Path(swagger_ui_bundle.swagger_ui_path)
# The only vendor files served: an explicit list, never a path from the request.
VENDOR_ASSETS = frozenset({"swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js",
                           "favicon-16x16.png", "favicon-32x32.png"})
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
       "script-src 'self'; connect-src 'self'; frame-ancestors 'none'")

blp = Blueprint("api_docs", __name__)


def is_docs_path(path: str) -> bool:
    """Paths under /api/ that need no token (the authentication hook skips them)."""
    return path == DOCS_PATH or path.startswith(ASSETS_PREFIX)


@blp.get(DOCS_PATH)
def page() -> Response:
    response = Response((_HERE / "page.html").read_bytes(), mimetype="text/html")
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-cache"
    return response


@blp.get(ASSETS_PREFIX + "<name>")
def asset(name: str) -> Response:
    if name == "init.js":
        response = send_from_directory(_HERE, "init.js", mimetype="text/javascript")
    elif name in VENDOR_ASSETS:
        response = send_from_directory(_VENDOR, name)
    else:
        raise NotFound("No such documentation asset.", code="not_found")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "public, max-age=86400"
    return response
