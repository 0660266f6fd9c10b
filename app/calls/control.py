"""``call.control``: a request to act on a live call's channel, from whoever cannot reach the
switch (the API process holding an agent's channel) to whichever controller can.

Why a bus command, like ``call.originate``: the API process knows neither the controller
driving the call nor the FreeSWITCH node it is on. Every controller consumes one durable queue
(single active consumer: one controller does every request, once, in order) and runs the action over its inbound ESL
connections, trying each connected node until one has the channel (app/voice/call_control.py).

The payload is checked again on the controller side (``ControlRequest.from_envelope``): only
known actions, uuids for the channels, a Q.850 cause name from a fixed set, DTMF digits; nothing
from the request is put into an ESL command unchecked. One builder per action (``ACTIONS``).
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional

from sqlalchemy.orm import Session

from app import limits
from app.events.envelope import Envelope
from app.events.payloads import emit

ROUTING_KEY = "call.control"
# Causes a requester may ask for: the agent declining an offer, or hanging up.
CAUSES = frozenset({"CALL_REJECTED", "NORMAL_CLEARING"})
_DTMF = re.compile(r"[0-9A-Da-d*#]+\Z")


class InvalidControl(ValueError):
    """A ``call.control`` payload the controllers refuse (logged, never acted on)."""


@dataclass(frozen=True)
class ControlRequest:
    account_id: str
    call_id: str        # the caller's channel (the call)
    leg_id: str         # the channel to act on (the agent's leg)
    action: str
    cause: Optional[str] = None
    digits: Optional[str] = None
    agent_id: Optional[str] = None

    def payload(self) -> dict[str, Any]:
        return {"callId": self.call_id, "legId": self.leg_id, "agentId": self.agent_id,
                "action": self.action, "cause": self.cause, "digits": self.digits}

    @classmethod
    def from_envelope(cls, envelope: Envelope) -> "ControlRequest":
        p = envelope.payload if isinstance(envelope.payload, dict) else {}
        request = cls(account_id=str(envelope.account or ""), call_id=_uuid(p.get("callId")),
                      leg_id=_uuid(p.get("legId")), action=str(p.get("action")),
                      cause=p.get("cause"), digits=p.get("digits"), agent_id=p.get("agentId"))
        request.command()  # validates
        return request

    def command(self) -> str:
        """The ESL ``api`` command for this request."""
        builder = ACTIONS.get(self.action)
        if builder is None:
            raise InvalidControl(f"unknown action {self.action!r}")
        return builder(self)


def _uuid(value: object) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise InvalidControl("callId and legId must be uuids") from None


def _kill(r: ControlRequest) -> str:
    if r.cause not in CAUSES:
        raise InvalidControl(f"cause must be one of {sorted(CAUSES)}")
    return f"uuid_kill {r.leg_id} {r.cause}"


def _hold(r: ControlRequest) -> str:
    return f"uuid_hold {r.leg_id}"


def _unhold(r: ControlRequest) -> str:
    return f"uuid_hold off {r.leg_id}"


def _dtmf(r: ControlRequest) -> str:
    if not isinstance(r.digits, str) or not _DTMF.match(r.digits) \
            or len(r.digits) > limits.AGENT_CHANNEL_DTMF_MAX_DIGITS:
        raise InvalidControl("digits: 1-32 of 0-9 A-D * #")
    # towards the caller: the digits go out on the caller's channel (an IVR or a PBX there)
    return f"uuid_send_dtmf {r.call_id} {r.digits}"


ACTIONS: dict[str, Callable[[ControlRequest], str]] = {
    "kill": _kill,
    "hold": _hold,
    "unhold": _unhold,
    "dtmf": _dtmf,
}


def request_control(db: Session, request: ControlRequest) -> None:
    """Queue the request in ``db``'s transaction (outbox): it leaves when the caller commits.
    Urgent: the commit wakes the controllers' relays (NOTIFY), so an agent's click reaches the
    switch in milliseconds, not at the next outbox poll; the row is still the durable copy."""
    request.command()  # refuse here what the controllers would refuse
    emit(ROUTING_KEY, request.payload(), account_id=request.account_id, session=db, urgent=True)
