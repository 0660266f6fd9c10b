"""Typed domain exceptions. The API maps them to one JSON shape in ``app.api.errors``:
``{"code": "...", "message": "...", "details": ...}`` with the status carried here."""
from __future__ import annotations

from typing import Any


class SbcError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body


class BadRequest(SbcError):
    status, code = 400, "bad_request"


class Unauthorized(SbcError):
    status, code = 401, "unauthorized"


class Forbidden(SbcError):
    status, code = 403, "forbidden"


class NotFound(SbcError):
    status, code = 404, "not_found"


class Conflict(SbcError):
    status, code = 409, "conflict"


class ValidationFailed(SbcError):
    status, code = 422, "validation_failed"


class UnsafeUrl(ValidationFailed):
    """A webhook/handler URL that is not allowed (scheme, private or loopback address)."""
    code = "unsafe_url"


class UnsupportedMediaType(SbcError):
    """A request body that is not declared as JSON: refused as such, never parsed as "no body"
    (which would answer "Missing data for required field" for every field)."""
    status, code = 415, "unsupported_media_type"


class TooManyLoginAttempts(SbcError):
    """Login refused before any password check: too many recent failures for this user from
    this address, for this address, or for this user from unknown addresses
    (``app.accounts.login_throttle``). The same answer whether or not the user exists."""
    status, code = 429, "too_many_login_attempts"

    def __init__(self, *, retry_after_seconds: int) -> None:
        super().__init__("Too many failed login attempts. Try again later.")
        self.retry_after_seconds = retry_after_seconds


class ServiceUnavailable(SbcError):
    status, code = 503, "service_unavailable"
