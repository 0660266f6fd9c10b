"""OpenAPI additions the views cannot state themselves.

Authentication is enforced globally (``before_request`` on every ``/api/`` path), so no view
decorator exists to document its 401; this apispec plugin adds it to every operation that
requires the bearer token (all of ``/api/`` except the document itself, plus /auth/refresh and
/auth/exchange). 403s are documented by ``require_license`` / ``require_permission``.
"""
from __future__ import annotations

from typing import Any

from apispec import BasePlugin

TOKEN_PATHS_OUTSIDE_API = ("/auth/refresh", "/auth/exchange", "/auth/mfa", "/auth/mfa/recovery-codes")
OPENAPI_DOC_PATH = "/api/openapi.json"


class BearerErrorsPlugin(BasePlugin):
    def operation_helper(self, path: str | None = None, operations: dict | None = None,
                         **kwargs: Any) -> None:
        if not path or not operations or path == OPENAPI_DOC_PATH:
            return
        if not (path.startswith("/api/") or path in TOKEN_PATHS_OUTSIDE_API):
            return
        for operation in operations.values():
            if isinstance(operation, dict):
                operation.setdefault("responses", {}).setdefault("401", "UNAUTHORIZED")


def document_forbidden(view: Any, reason: str) -> None:
    """Record a 403 on the view's OpenAPI operation (flask-smorest ``manual_doc``)."""
    apidoc = dict(getattr(view, "_apidoc", {}))
    manual = dict(apidoc.get("manual_doc", {}))
    responses = dict(manual.get("responses", {}))
    responses["403"] = "FORBIDDEN"
    manual["responses"] = responses
    apidoc["manual_doc"] = manual
    view._apidoc = apidoc
    # flask-smorest: docstring's first line = summary, the rest = description
    doc = (view.__doc__ or "").rstrip()
    view.__doc__ = f"{doc}\n\n{reason}" if doc else reason
