"""``call.originate``: one outbound leg — what to dial, as whom, and what runs when it answers.

Three producers share the message (docs/events.md):
- the callback dispatcher (``queueId``, ``agentId``, ``callbackId``, ``attempt``): dial the
  customer, then connect the agent (SPEC "Transitions");
- the campaign dialer (``agentId``, ``queueId``, ``from``, ``campaignId``, ``carrierId``): the
  same, for a campaign contact and the agent reserved for it (progressive,
  app/campaigns/dialer.py); or, for power and predictive, ``campaignId`` without an agent: the
  answered customer waits up to 2 s for the first free agent of ``queueId``
  (app/campaigns/overdial.py). Either way ``campaignId`` also brings the campaign's
  answering-machine detection (app/voice/amd.py) and ``carrierId`` restricts least-cost routing
  to the campaign's trunk;
- ``POST /api/calls`` (``applicationSid``): the application drives the answered leg exactly like
  an inbound call, with ``direction: outbound``.
The controller that consumes the message dials through least-cost routing; the answered leg
comes back on the outbound socket, and the channel variables written here tell that call
session which account, application and agent it belongs to. FreeSWITCH sets channel variables
only from what the originate string says (a carrier's SIP headers become ``sip_h_*``), so a
caller cannot forge them.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import update

from app import limits
from app.db.engine import tenant_session
from app.errors import SbcError
from app.events.envelope import Envelope
from app.events.payloads import call_originate
from app.models import Callback
from app.routing.lcr import LCR_CARRIER_VARIABLE, LCR_GATEWAY_VARIABLE

ORIGINATED_VARIABLE = "sbc_originated"            # "true" on every leg the controller dials
ACCOUNT_VARIABLE = "sbc_account_sid"
APPLICATION_VARIABLE = "sbc_application_sid"
AGENT_VARIABLE = "sbc_agent_sid"
QUEUE_VARIABLE = "sbc_queue_sid"
CALLBACK_VARIABLE = "sbc_callback_sid"
CAMPAIGN_VARIABLE = "sbc_campaign_sid"            # a campaign call: its answering-machine detection
TRACE_ID_VARIABLE = "sbc_trace_id"                # shared by every leg of a conversation


class InvalidOriginate(SbcError):
    """A ``call.originate`` message the controller cannot act on (logged, not retried)."""
    status, code = 422, "invalid_originate"


@dataclass(frozen=True)
class OriginateRequest:
    call_id: uuid.UUID            # the new leg's id (origination_uuid), chosen by the producer
    account_id: uuid.UUID
    trace_id: uuid.UUID
    phone_number: str             # digits, dialled through least-cost routing
    caller_id: Optional[str] = None
    application_id: Optional[uuid.UUID] = None
    agent_id: Optional[uuid.UUID] = None
    queue_id: Optional[uuid.UUID] = None
    callback_id: Optional[uuid.UUID] = None
    attempt: int = 1
    timeout_seconds: int = limits.DIAL_DEFAULT_RING_TIMEOUT_SECONDS
    # a campaign's call: its answering-machine detection; without an agent (power/predictive)
    # the answer waits for one
    campaign_id: Optional[uuid.UUID] = None
    # least-cost routing restricted to this carrier (a campaign's trunk)
    carrier_id: Optional[uuid.UUID] = None

    @classmethod
    def from_envelope(cls, envelope: Envelope) -> "OriginateRequest":
        p = envelope.payload
        account = _uuid(envelope.account, "account")
        if account is None:
            raise InvalidOriginate("call.originate without an account.")
        number = str(p.get("phoneNumber") or "").lstrip("+")
        if not (number.isascii() and number.isdigit() and 1 <= len(number) <= 32):
            raise InvalidOriginate("phoneNumber must be 1-32 digits.", details={"phoneNumber": number})
        caller_id = p.get("from")
        if caller_id is not None:
            caller_id = str(caller_id).lstrip("+")
            if not (caller_id.isascii() and caller_id.isdigit() and 1 <= len(caller_id) <= 32):
                raise InvalidOriginate("from must be 1-32 digits.", details={"from": caller_id})
        request = cls(
            call_id=_uuid(p.get("callId"), "callId") or uuid.uuid4(),
            account_id=account,
            trace_id=_uuid(envelope.trace_id, "trace_id") or uuid.uuid4(),
            phone_number=number,
            caller_id=caller_id,
            application_id=_uuid(p.get("applicationSid"), "applicationSid"),
            agent_id=_uuid(p.get("agentId"), "agentId"),
            queue_id=_uuid(p.get("queueId"), "queueId"),
            callback_id=_uuid(p.get("callbackId"), "callbackId"),
            campaign_id=_uuid(p.get("campaignId"), "campaignId"),
            carrier_id=_uuid(p.get("carrierId"), "carrierId"),
            attempt=_int(_default(p.get("attempt"), 1), "attempt", 1, limits.CALLBACK_MAX_ATTEMPTS),
            timeout_seconds=_int(_default(p.get("timeoutSeconds"), limits.DIAL_DEFAULT_RING_TIMEOUT_SECONDS),
                                 "timeoutSeconds", 1, limits.DIAL_MAX_RING_TIMEOUT_SECONDS),
        )
        waits = request.campaign_id is not None and request.agent_id is None
        if (request.application_id is None) == (request.agent_id is None) and not waits:
            raise InvalidOriginate("call.originate needs exactly one of applicationSid and agentId "
                                   "(or a campaignId with a queueId).")
        if waits and (request.queue_id is None or request.application_id is not None):
            raise InvalidOriginate("A campaign call without an agent needs a queueId and no applicationSid.")
        return request

    def channel_variables(self) -> dict[str, str]:
        """What the answered leg's session reads back (``OriginatedLeg.from_variables``)."""
        variables = {
            "origination_uuid": str(self.call_id),
            ORIGINATED_VARIABLE: "true",
            ACCOUNT_VARIABLE: str(self.account_id),
            TRACE_ID_VARIABLE: str(self.trace_id),
            "originate_timeout": str(self.timeout_seconds),
        }
        if self.caller_id:
            variables["origination_caller_id_number"] = self.caller_id
        for name, value in ((APPLICATION_VARIABLE, self.application_id), (AGENT_VARIABLE, self.agent_id),
                            (QUEUE_VARIABLE, self.queue_id), (CALLBACK_VARIABLE, self.callback_id),
                            (CAMPAIGN_VARIABLE, self.campaign_id)):
            if value is not None:
                variables[name] = str(value)
        return variables


@dataclass(frozen=True)
class OriginatedLeg:
    """The session's view of a leg the controller dialled (None for inbound calls)."""
    account_id: uuid.UUID
    application_id: Optional[uuid.UUID]
    agent_id: Optional[uuid.UUID]
    queue_id: Optional[uuid.UUID]
    # the carrier whose gateway answered: the LCR leg variables (app.routing.lcr.bridge_string)
    carrier_id: Optional[uuid.UUID] = None
    gateway_id: Optional[uuid.UUID] = None
    # a campaign's call: its answering-machine detection; without an agent (power/predictive)
    # its answer waits for an agent of ``queue_id``
    campaign_id: Optional[uuid.UUID] = None

    @classmethod
    def from_variables(cls, variable) -> Optional["OriginatedLeg"]:  # noqa: ANN001 (Event.variable)
        if variable(ORIGINATED_VARIABLE) != "true":
            return None
        try:
            return cls(
                account_id=uuid.UUID(variable(ACCOUNT_VARIABLE) or ""),
                application_id=_optional_uuid(variable(APPLICATION_VARIABLE)),
                agent_id=_optional_uuid(variable(AGENT_VARIABLE)),
                queue_id=_optional_uuid(variable(QUEUE_VARIABLE)),
                carrier_id=_optional_uuid(variable(LCR_CARRIER_VARIABLE)),
                gateway_id=_optional_uuid(variable(LCR_GATEWAY_VARIABLE)),
                campaign_id=_optional_uuid(variable(CAMPAIGN_VARIABLE)),
            )
        except ValueError:
            return None


def agent_connect_verbs(contact: str) -> list[dict[str, Any]]:
    """A callback's answered customer is connected to the agent's contact: ``user/1001`` is a
    directory user of the account, ``sip:`` and ``sofia/internal/`` forms a SIP URI
    (app/contact/endpoints.py). A stored contact of no known form dials nothing: the call ends
    as one without an application would."""
    from app.contact.endpoints import dial_target

    target = dial_target(contact)
    return [{"verb": "dial", "target": [target]}] if target is not None else []


def record_callback_attempt(request: OriginateRequest, *, reached: bool) -> None:
    """The outcome of one callback attempt: ``completed`` once the customer answered, otherwise
    back to ``pending`` for another attempt, or ``failed`` after the last one (SPEC: 3)."""
    if request.callback_id is None:
        return
    if reached:
        status = "completed"
    elif request.attempt >= limits.CALLBACK_MAX_ATTEMPTS:
        status = "failed"
    else:
        status = "pending"
    with tenant_session(request.account_id) as session:
        session.execute(
            update(Callback)
            .where(Callback.id == request.callback_id, Callback.status.in_(("pending", "dialing")))
            .values(status=status, attempts=request.attempt,
                    last_attempt_at=datetime.now(timezone.utc)))


def _uuid(value: Any, name: str) -> Optional[uuid.UUID]:
    if value in (None, ""):
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise InvalidOriginate(f"{name} is not a uuid.", details={name: str(value)[:64]}) from None


def _optional_uuid(value: Optional[str]) -> Optional[uuid.UUID]:
    return uuid.UUID(value) if value else None


def _default(value: Any, default: int) -> Any:
    return default if value is None else value


def _int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidOriginate(f"{name} must be an integer from {low} to {high}.",
                               details={name: value if isinstance(value, (int, str)) else None})
    return value


def originate_payload(request: OriginateRequest) -> dict[str, Any]:
    """The ``call.originate`` payload for ``request`` (the inverse of ``from_envelope``)."""
    return call_originate(
        call_id=request.call_id, phone_number=request.phone_number, caller_id=request.caller_id,
        application_id=request.application_id, agent_id=request.agent_id,
        queue_id=request.queue_id, callback_id=request.callback_id, attempt=request.attempt,
        timeout_seconds=request.timeout_seconds, campaign_id=request.campaign_id,
        carrier_id=request.carrier_id)
