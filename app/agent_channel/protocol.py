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
from app.events.envelope import rfc3339

PROTOCOL_VERSION = 1

# Close codes (docs/agents.md "Closing")
CLOSE_NORMAL = 1000
CLOSE_INTERNAL_ERROR = 1011
CLOSE_TAKEOVER = 4001
CLOSE_AUTH_FAILED = 4003
CLOSE_AUTH_TIMEOUT = 4008
CLOSE_SLOW_CLIENT = 4009

# Error codes of the channel itself (REST codes such as license_required, tenant_mismatch,
# token_expired, invalid_token, not_an_agent, validation_failed pass through unchanged)
BAD_MESSAGE = "bad_message"
UNKNOWN_COMMAND = "unknown_command"
AUTH_REQUIRED = "auth_required"
AUTH_TIMEOUT = "auth_timeout"
NO_OFFER = "no_offer"
NO_CALL = "no_call"
INTERNAL_ERROR = "internal_error"


class ProtocolError(Exception):
    """A frame the server cannot use: answered with ``error`` (or a failed ``ack``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def now() -> str:
    return rfc3339(datetime.now(timezone.utc))


def message(type_: str, **fields: Any) -> dict[str, Any]:
    """A server → agent message: ``type``, the fields, and ``at``."""
    return {"type": type_, **fields, "at": now()}


def error(code: str, text: str) -> dict[str, Any]:
    return message("error", code=code, message=text)


def ack(command_id: str | None, **fields: Any) -> dict[str, Any]:
    """A command's success, with the command's own fields (a disposition's ``code``...)."""
    return {"type": "ack", "id": command_id, "ok": True, **fields}


def nack(command_id: str | None, code: str, text: str) -> dict[str, Any]:
    return {"type": "ack", "id": command_id, "ok": False, "error": {"code": code, "message": text}}


def encode(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"), default=str)


def parse(frame: object) -> dict[str, Any]:
    """One client frame → its JSON object; raises ProtocolError for anything else (binary
    frames, invalid JSON, non-objects, a missing or non-string ``type``, a bad ``id``)."""
    if not isinstance(frame, str):
        raise ProtocolError(BAD_MESSAGE, "Send JSON text frames.")
    try:
        body = json.loads(frame)
    except (ValueError, RecursionError):
        raise ProtocolError(BAD_MESSAGE, "The frame is not JSON.") from None
    if not isinstance(body, dict) or not isinstance(body.get("type"), str):
        raise ProtocolError(BAD_MESSAGE, "A message is a JSON object with a string 'type'.")
    command_id = body.get("id")
    if command_id is not None and not (isinstance(command_id, str)
                                       and 0 < len(command_id) <= limits.AGENT_CHANNEL_ID_MAX_CHARS):
        raise ProtocolError(BAD_MESSAGE, f"'id' is a string of 1-{limits.AGENT_CHANNEL_ID_MAX_CHARS} characters.")
    return body
