"""One error shape for every REST failure: ``{"code", "message", "details"}``.

Clients branch on ``code`` (stable, snake_case) and show ``message``; ``details`` carries
field-level validation messages. Every path that can fail — our domain exceptions,
webargs/marshmallow validation, unknown routes and methods, JWT failures and unexpected
crashes — is funnelled here so no handler ever leaks a stack trace or a framework-specific body.
"""
from __future__ import annotations

import logging
from typing import Any

import marshmallow as ma
from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue
from sqlalchemy.exc import DataError, DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException, InternalServerError

from app import limits
from app.db.availability import database_unavailable
from app.errors import SbcError

log = logging.getLogger(__name__)

# Stable codes for HTTP failures raised by the framework (routing, webargs, abort()).
HTTP_CODES: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_failed",
    429: "too_many_requests",
    500: "internal_error",
    503: "service_unavailable",
}

HTTP_MESSAGES: dict[int, str] = {
    400: "The request could not be understood.",
    404: "No such resource.",
    405: "Method not allowed on this resource.",
    422: "The request did not pass validation.",
    500: "Internal error. It has been logged.",
}


class ErrorSchema(ma.Schema):
    """Documents the error body in the OpenAPI document (used by flask-smorest for responses)."""

    code = ma.fields.String(required=True, metadata={"description": "Stable machine-readable code"})
    message = ma.fields.String(required=True, metadata={"description": "Human readable message"})
    details = ma.fields.Raw(metadata={"description": "Field-level messages or extra context"})


def error_body(status: int, code: str, message: str, details: Any = None) -> ResponseReturnValue:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return jsonify(body), status


def handle_sbc_error(error: SbcError) -> ResponseReturnValue:
    return error_body(error.status, error.code, error.message, error.details)


def handle_http_exception(error: HTTPException) -> ResponseReturnValue:
    """Framework errors (abort, routing, webargs) in our shape; 500s are logged, never echoed."""
    status = error.code or 500
    if isinstance(error, InternalServerError) or status >= 500:
        original = getattr(error, "original_exception", None)
        log.error("unhandled error", exc_info=original or error)
        return error_body(500 if status < 500 else status, HTTP_CODES.get(status, "internal_error"),
                          HTTP_MESSAGES[500])
    data = getattr(error, "data", None) or {}
    details = data.get("errors") or data.get("messages")
    message = data.get("message") or HTTP_MESSAGES.get(status) or (error.description or error.name)
    code = HTTP_CODES.get(status, "http_error")
    if status == 400 and _is_invalid_json(details):
        code, message = "invalid_json", "The request body is not valid JSON."
    response = error_body(status, code, message, details)
    headers = data.get("headers") or {}
    if status == 405 and hasattr(error, "valid_methods") and error.valid_methods:
        headers = {**headers, "Allow": ", ".join(error.valid_methods)}
    if headers:
        body, status_code = response  # type: ignore[misc]
        return body, status_code, headers
    return response


def _is_invalid_json(details: Any) -> bool:
    return isinstance(details, dict) and any(
        "Invalid JSON body." in (messages if isinstance(messages, list) else [])
        for messages in details.values()
    )


def handle_unexpected(error: Exception) -> ResponseReturnValue:
    log.error("unhandled error", exc_info=error)
    return error_body(500, "internal_error", HTTP_MESSAGES[500])


# SQLSTATE class 22, "data exception": PostgreSQL refused a value (out of range, malformed,
# untranslatable). Input is validated before it reaches the database (app.api.json_body,
# app.api.fields, schema ranges); this is the backstop for a value a check has not foreseen —
# still the caller's input, so a 422 and one log line, never a 500 with a traceback.
_DATA_EXCEPTION_CLASS = "22"


def handle_data_error(error: DataError) -> ResponseReturnValue:
    pgcode = getattr(error.orig, "pgcode", None) or ""
    if not pgcode.startswith(_DATA_EXCEPTION_CLASS):
        return handle_unexpected(error)
    log.warning("PostgreSQL refused a value (SQLSTATE %s) on %s %s", pgcode, request.method, request.path)
    return error_body(422, "invalid_value", "A value is out of range or malformed for storage.")


def handle_database_error(error: Exception) -> ResponseReturnValue:
    """PostgreSQL away (refused, terminated, pool exhausted: ``app.db.availability``, the one
    answer every path shares) is not a bug of this request: 503 ``database_unavailable`` with
    ``Retry-After`` and one warning line, never a 500 with a traceback. Any other database
    error is unexpected."""
    if not database_unavailable(error):
        return handle_unexpected(error)
    log.warning("PostgreSQL unavailable on %s %s (%s)", request.method, request.path, type(error).__name__)
    body, status = error_body(503, "database_unavailable",  # type: ignore[misc]
                              "The database is unavailable right now; try again shortly.")
    return body, status, {"Retry-After": str(limits.DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS)}


def register_error_handlers(app: Flask) -> None:
    """Register after flask-smorest's Api so our HTTPException handler replaces its default."""
    app.register_error_handler(SbcError, handle_sbc_error)
    app.register_error_handler(DataError, handle_data_error)
    app.register_error_handler(DBAPIError, handle_database_error)
    app.register_error_handler(PoolTimeout, handle_database_error)
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(Exception, handle_unexpected)
