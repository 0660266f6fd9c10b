"""The agent channel's wire format (docs/agents.md "The agent channel" is the contract).

Every frame is one JSON object (text frame) with a ``type``. Server messages carry ``at``
(RFC 3339 UTC); commands carry a client ``id`` echoed in their ``ack``. Close codes of our own
are in the 4000 range (RFC 6455 leaves it to applications).
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from app import limits
from app.api import json_body
from app.errors import ValidationFailed
from app.events.envelope import rfc3339

PROTOCOL_VERSION = 1

# Close codes (docs/agents.md "Closing")
CLOSE_NORMAL = 1000
CLOSE_INTERNAL_ERROR = 1011
CLOSE_TAKEOVER = 4001
CLOSE_AUTH_FAILED = 4003
CLOSE_AUTH_TIMEOUT = 4008
CLOSE_SLOW_CLIENT = 4009
CLOSE_RATE_LIMITED = 4029  # kept on sending over the command budget (4029 as HTTP's 429)

# Error codes of the channel itself (REST codes such as license_required, tenant_mismatch,
# token_expired, invalid_token, not_an_agent, validation_failed pass through unchanged)
BAD_MESSAGE = "bad_message"
UNKNOWN_COMMAND = "unknown_command"
AUTH_REQUIRED = "auth_required"
AUTH_TIMEOUT = "auth_timeout"
NO_OFFER = "no_offer"
NO_CALL = "no_call"
RATE_LIMITED = "rate_limited"
INTERNAL_ERROR = "internal_error"


class ProtocolError(Exception):
    """A frame the server cannot use: answered with ``error`` (or a failed ``ack``).
    ``command_id``: the frame's ``id`` when it could be read although the frame was refused
    (text the strict decoder refuses inside a well-formed command), so the client gets its ack."""

    def __init__(self, code: str, message: str, *, details: Any = None,
                 command_id: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.command_id = command_id


def now() -> str:
    return rfc3339(datetime.now(timezone.utc))


def message(type_: str, **fields: Any) -> dict[str, Any]:
    """A server → agent message: ``type``, the fields, and ``at``."""
    return {"type": type_, **fields, "at": now()}


def error(code: str, text: str, details: Any = None) -> dict[str, Any]:
    """An ``error`` message; ``details`` (field -> problems, as REST's) only when there are some."""
    if details is None:
        return message("error", code=code, message=text)
    return message("error", code=code, message=text, details=details)


def ack(command_id: str | None, **fields: Any) -> dict[str, Any]:
    """A command's success, with the command's own fields (a disposition's ``code``...)."""
    return {"type": "ack", "id": command_id, "ok": True, **fields}


def nack(command_id: str | None, code: str, text: str, details: Any = None) -> dict[str, Any]:
    failure: dict[str, Any] = {"code": code, "message": text}
    if details is not None:
        failure["details"] = details
    return {"type": "ack", "id": command_id, "ok": False, "error": failure}


def encode(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"), default=str)


def parse(frame: object) -> dict[str, Any]:
    """One client frame -> its JSON object, decoded by the REST bodies' strict decoder
    (``app.api.json_body``: no NUL or lone surrogate in any text, numbers within bigint and
    finite, nesting at most ``limits.JSON_MAX_DEPTH``). Raises ProtocolError for anything else:
    ``bad_message`` (binary frames, not JSON, non-objects, a missing or non-string ``type``, a
    bad ``id``), or REST's own code (``validation_failed`` naming the field,
    ``number_out_of_range``, ``json_too_deep``)."""
    if not isinstance(frame, str):
        raise ProtocolError(BAD_MESSAGE, "Send JSON text frames.")
    try:
        body = json_body.loads(frame, where="frame")
    except json_body.InvalidJson:
        raise ProtocolError(BAD_MESSAGE, "The frame is not JSON.") from None
    except json_body.JsonTooDeep as exc:
        raise ProtocolError(exc.code, exc.message) from None
    except ValidationFailed as exc:  # well-formed JSON with unusable text or numbers
        raise ProtocolError(exc.code, exc.message, details=exc.details,
                            command_id=readable_id(frame)) from None
    if not isinstance(body, dict) or not isinstance(body.get("type"), str):
        raise ProtocolError(BAD_MESSAGE, "A message is a JSON object with a string 'type'.")
    command_id = body.get("id")
    if command_id is not None and not _usable_id(command_id):
        raise ProtocolError(BAD_MESSAGE, f"'id' is a string of 1-{limits.AGENT_CHANNEL_ID_MAX_CHARS} characters.")
    return body


def _usable_id(command_id: object) -> bool:
    return (isinstance(command_id, str) and 0 < len(command_id) <= limits.AGENT_CHANNEL_ID_MAX_CHARS
            and json_body.text_problem(command_id) is None)


def readable_id(frame: object) -> str | None:
    """The frame's command ``id`` when one can be read, for the ``ack`` of a frame that is
    refused anyway (by the strict decoder, or over the rate limit); else None. Lenient on
    purpose (only the ``id`` is used, and only when it is itself a usable id)."""
    if not isinstance(frame, str):
        return None
    try:
        body = json.loads(frame)
    except (ValueError, RecursionError):
        return None
    command_id = body.get("id") if isinstance(body, dict) else None
    return command_id if _usable_id(command_id) else None
