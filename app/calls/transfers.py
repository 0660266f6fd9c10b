"""Blind transfers: where an agent may send its caller, and the verbs the caller's session runs
to get there (docs/agents.md "Transfers").

Why verbs: a blind transfer is the caller's session leaving the agent and running something
new, exactly what a live ``redirect`` does (app/voice/live_actions.py), so every target is one
verb the product already has, with that verb's own rules:

- ``agent``: the ``queue`` verb of the queue the caller came from, offering only that agent
  (it rings when the agent is available and registered, like any offer);
- ``queue``: the ``queue`` verb of the named queue, keeping the caller's ``priority``;
- ``number``: the ``dial`` verb's phone target (least-cost routing; a ``callerId`` must be one
  of the account's numbers, else the caller's own number is presented, as for ``dial``);
- ``sip``: the ``dial`` verb's sip target (only hosts the account lists).

The target is checked here on both sides of the process boundary (the agent channel before
it asks, the controller again before it acts); the verb's own schema checks it a third time.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Optional

from app.calls.sip_targets import PHONE_PATTERN, InvalidSipUri, parse_sip_uri

KINDS = ("agent", "queue", "number", "sip")
QUEUE_NAME = re.compile(r"[A-Za-z0-9 _.\-]{1,64}\Z")
_PHONE = re.compile(PHONE_PATTERN.rstrip("$") + r"\Z")


class InvalidTarget(ValueError):
    """The transfer target is not one an agent may name (a 422 ``validation_failed``)."""


class NoQueueToReturnTo(ValueError):
    """An ``agent`` target needs the queue the caller came from; this call came from none."""


@dataclass(frozen=True)
class TransferTarget:
    kind: str
    value: str                      # agent id, queue name, number or sip: URI
    caller_id: Optional[str] = None  # number targets only

    def as_dict(self) -> dict[str, Any]:
        """The target as events and replies show it (``call.transferred``'s ``to``)."""
        body: dict[str, Any] = {"type": self.kind, _FIELD[self.kind]: self.value}
        if self.caller_id:
            body["callerId"] = self.caller_id
        return body

    def verbs(self, *, queue: Optional[str], priority: int) -> list[dict[str, Any]]:
        """The verb list the caller's session runs instead of the rest of its own.
        ``queue``/``priority``: the queue the caller was answered from and its priority there."""
        if self.kind == "agent":
            if queue is None:
                raise NoQueueToReturnTo(self.value)
            return [{"verb": "queue", "name": queue, "agent": self.value, "priority": priority}]
        if self.kind == "queue":
            return [{"verb": "queue", "name": self.value, "priority": priority}]
        dial: dict[str, Any] = {"verb": "dial", "target": [
            {"type": "phone" if self.kind == "number" else "sip", "name": self.value}]}
        if self.caller_id:
            dial["callerId"] = self.caller_id
        return [dial]


# the field of the target object that names it, per kind
_FIELD = {"agent": "agentId", "queue": "name", "number": "number", "sip": "uri"}


def parse_target(raw: object) -> TransferTarget:
    """``{"type": "agent", "agentId": ...}`` | ``{"type": "queue", "name": ...}`` |
    ``{"type": "number", "number": ..., "callerId"?: ...}`` | ``{"type": "sip", "uri": ...}``."""
    if not isinstance(raw, dict) or raw.get("type") not in KINDS:
        raise InvalidTarget(f"'target' is an object whose 'type' is one of {', '.join(KINDS)}.")
    kind = str(raw["type"])
    field = _FIELD[kind]
    allowed = {"type", field} | ({"callerId"} if kind == "number" else set())
    extra = sorted(set(raw) - allowed)
    if extra:
        raise InvalidTarget(f"Not a field of a '{kind}' target: {', '.join(extra)}.")
    value = raw.get(field)
    if not isinstance(value, str):
        raise InvalidTarget(f"A '{kind}' target needs '{field}'.")
    if kind == "agent":
        try:
            value = str(uuid.UUID(value))
        except ValueError:
            raise InvalidTarget("'agentId' must be an agent id.") from None
    elif kind == "queue" and not QUEUE_NAME.match(value):
        raise InvalidTarget("'name': 1-64 letters, digits, spaces, '_', '.', '-'.")
    elif kind == "number" and not _PHONE.match(value):
        raise InvalidTarget("'number': 3-20 digits, optional leading +.")
    elif kind == "sip":
        try:
            parse_sip_uri(value, scheme_required=True)
        except InvalidSipUri as exc:
            raise InvalidTarget(f"'uri': {exc}") from None
    caller_id = raw.get("callerId")
    if caller_id is not None and (not isinstance(caller_id, str) or not _PHONE.match(caller_id)):
        raise InvalidTarget("'callerId': 3-20 digits, optional leading +.")
    return TransferTarget(kind, value, caller_id)
