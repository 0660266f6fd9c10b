"""Agent → server commands: one handler per ``type`` in an explicit registry (``COMMANDS``).

Each handler runs in the socket's greenlet, inside the upgrade request's Flask context, after
the identity was re-read from the database (a user deactivated or an account disabled since
the login stops being served at the next command). It returns extra ``ack`` fields or raises a
typed error (``SbcError`` or ``ProtocolError``): the ack then carries ``ok: false`` with the
error's stable code. Nothing a client sends reaches ``getattr`` or the switch unchecked.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from marshmallow import ValidationError

from app import limits
from app.agent_channel import protocol
from app.agent_channel.connection import AgentConnection
from app.agent_channel.hub import Hub
from app.agent_channel.protocol import ProtocolError
from app.api.agents import service as agents_service
from app.api.agents.schemas import AgentStateSchema
from app.api.security import tenant_db
from app.errors import ValidationFailed

_DTMF = re.compile(r"[0-9A-Da-d*#]+\Z")


@dataclass
class CommandContext:
    conn: AgentConnection
    hub: Hub


Handler = Callable[[CommandContext, dict[str, Any]], dict[str, Any]]


def _set_state(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """= ``PUT /api/agents/me/state``: the same schema, the same writer (app/contact/states)."""
    try:
        data = AgentStateSchema().load({k: body[k] for k in ("state", "reason") if k in body})
    except ValidationError as exc:
        raise ValidationFailed("Invalid state.", code="validation_failed", details=exc.messages) from None
    with tenant_db() as db:
        agent = agents_service.set_state(db, uuid.UUID(ctx.conn.account_id), uuid.UUID(ctx.conn.agent_id), data)
    return {"state": agent["state"], "reason": agent["state_reason"]}


def _offer_id(ctx: CommandContext, body: dict[str, Any]) -> str:
    """The ``offerId`` named must be the offer ringing now (omitted: that offer)."""
    offer_id = body.get("offerId", ctx.conn.offer_id)
    if not ctx.conn.offer_id or offer_id != ctx.conn.offer_id:
        raise ProtocolError(protocol.NO_OFFER, "No such offer is ringing.")
    return offer_id


def _accept(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """The agent takes the offer: ``call`` phase ``connecting``. The agent's endpoint answers
    the ringing leg itself (the SDK answers its WSS leg; a desk phone is picked up): a SIP
    leg cannot be answered from the server side. ``connected`` follows on ``agent.accept``."""
    offer_id = _offer_id(ctx, body)
    ctx.conn.send(protocol.message("call", phase="connecting", callId=offer_id))
    return {"offerId": offer_id}


def _media(state: str) -> Handler:
    """mute / unmute: the microphone is the SDK's (browser media never crosses the API); the
    server acknowledges and echoes ``media`` so every view of the agent agrees."""

    def handler(ctx: CommandContext, _body: dict[str, Any]) -> dict[str, Any]:
        ctx.conn.send(protocol.message("media", state=state, callId=ctx.conn.call_id))
        return {}

    return handler


def dtmf_digits(body: dict[str, Any]) -> str:
    digits = body.get("digits")
    if not isinstance(digits, str) or not _DTMF.match(digits) \
            or len(digits) > limits.AGENT_CHANNEL_DTMF_MAX_DIGITS:
        raise ValidationFailed(f"'digits': 1-{limits.AGENT_CHANNEL_DTMF_MAX_DIGITS} of 0-9 A-D * #.",
                               code="validation_failed")
    return digits


COMMANDS: dict[str, Handler] = {
    "setState": _set_state,
    "accept": _accept,
    "mute": _media("muted"),
    "unmute": _media("connected"),
}
