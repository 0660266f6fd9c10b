"""``POST /api/applications/:id/try``: what ``sbc webhook try`` shows, for a saved application.

The request goes to the application's saved ``call_hook_url`` with its method, Basic-auth
credentials and signing secret, exactly as a call would send it (``app.verbs.trial``, the CLI's
own code). Only the saved URL is tried: a URL typed in the request could carry the write-only
credentials elsewhere. The webhook client's SSRF guard checks the URL and its addresses at use.
"""
from __future__ import annotations

import uuid
from typing import Any, Optional
from urllib.parse import urlsplit

from sqlalchemy.orm import Session

from app.api.applications.service import get
from app.crypto import decrypt_secret
from app.errors import Conflict
from app.verbs import trial


def _credentials(row: Any) -> tuple[Optional[str], Optional[tuple[str, str]]]:
    secret = decrypt_secret(row.signing_secret_encrypted) if row.signing_secret_encrypted else None
    auth = None
    if row.basic_auth_username and row.basic_auth_password_encrypted:
        auth = (row.basic_auth_username, decrypt_secret(row.basic_auth_password_encrypted))
    return secret, auth


def prepare(db: Session, account_id: uuid.UUID, app_id: uuid.UUID, params: dict[str, Any]) -> dict[str, Any]:
    """Everything the try needs, read inside the transaction (the HTTP request is sent after it)."""
    row = get(db, account_id, app_id)
    if not row.call_hook_url:
        raise Conflict("The application has no call hook URL to try.", code="no_call_hook")
    if urlsplit(row.call_hook_url).scheme.lower() in ("ws", "wss"):
        raise Conflict("A WebSocket handler cannot be tried here: it answers over a live socket.",
                       code="call_hook_is_websocket")
    secret, auth = _credentials(row)
    body = trial.test_request_body(from_number=params["from_number"], to_number=params["to_number"],
                                   direction=params["direction"], account_sid=str(account_id),
                                   application_sid=str(row.id))
    return {"url": row.call_hook_url, "method": row.call_hook_method or "POST", "body": body,
            "secret": secret, "basic_auth": auth}


def run(prepared: dict[str, Any]) -> dict[str, Any]:
    """Send it once and describe the result as the CLI prints it (never the credentials)."""
    result = trial.try_hook(prepared["url"], prepared["method"], prepared["body"],
                            secret=prepared["secret"], basic_auth=prepared["basic_auth"])
    failure = None
    if result.failure is not None:
        exc = result.failure
        failure = {"reason": exc.reason, "detail": exc.detail, "attempts": exc.attempts,
                   "last_status": exc.last_status,
                   "line": trial.failure_line(exc.reason, exc.attempts, exc.detail, exc.last_status),
                   "hint": trial.failure_hint(exc.reason, exc.detail, result.url)}
    return {
        "outcome": result.outcome,
        "request": {"method": result.method, "url": result.url, "signed": result.signed,
                    "basic_auth": prepared["basic_auth"] is not None, "body": result.body},
        "elapsed_ms": None if result.elapsed_ms is None else round(result.elapsed_ms, 1),
        "steps": result.verdict.steps if failure is None else [],
        "errors": result.verdict.errors if failure is None else [],
        "warnings": result.verdict.warnings if failure is None else [],
        "failure": failure,
    }
