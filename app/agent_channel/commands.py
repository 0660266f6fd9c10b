"""Agent → server commands: one handler per ``type`` in an explicit registry (``COMMANDS``).

Each handler runs in the socket's greenlet, inside the upgrade request's Flask context, after
the identity was re-read from the database (a user deactivated or an account disabled since
the login stops being served at the next command). It returns extra ``ack`` fields or raises a
typed error (``SbcError`` or ``ProtocolError``): the ack then carries ``ok: false`` with the
error's stable code. Nothing a client sends reaches ``getattr`` or the switch unchecked.
"""
from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional

import gevent
from marshmallow import ValidationError

from app import limits
from app.agent_channel import protocol
from app.agent_channel.connection import AgentConnection
from app.agent_channel.hub import Hub
from app.agent_channel.protocol import ProtocolError
from app.api.agents import service as agents_service
from app.api.agents.schemas import AgentStateSchema
from app.api.calls import live
from app.api.campaigns import service as campaigns_service
from app.api.security import tenant_db
from app.calls.consult import CONSULT_KINDS
from app.calls.control import ControlRequest, request_control
from app.calls.transfers import KINDS, InvalidTarget, TransferTarget, parse_target
from app.campaigns import dispositions as campaign_dispositions
from app.campaigns.preview import ACCEPTED, SKIPPED, PreviewOffer, PreviewOffers
from app.contact import interactions
from app.contact.states import default_presence
from app.errors import Conflict, NotFound, ValidationFailed
from app.settings import get_settings

_DTMF = re.compile(r"[0-9A-Da-d*#]+\Z")
# A hold is sent no sooner than this after the call connected. On the real switch a
# uuid_hold 120 ms after the agent answered queued the caller's hold music (a broadcast) behind
# the bridge's start; the unhold's stop came first, the music then looped for ever and the
# agent's leg could not be hung up (tests/realswitch/test_agent_channel_realswitch.py).
HOLD_SETTLE_SECONDS = 1.0


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


def _preview_offers() -> PreviewOffers:
    presence = default_presence()
    return PreviewOffers(presence.redis, presence.prefix)


def _is_preview(ctx: CommandContext, body: dict[str, Any]) -> bool:
    """Does the command answer a preview offer? Named by ``offerId``, or omitted while a
    preview (and no queue offer) is open on this socket."""
    offer_id = body.get("offerId")
    if offer_id is None:
        return ctx.conn.preview_id is not None and ctx.conn.offer_id is None
    return offer_id != ctx.conn.offer_id and isinstance(offer_id, str) and 0 < len(offer_id) <= 64


def _answer_preview(ctx: CommandContext, body: dict[str, Any], choice: str) -> PreviewOffer:
    """The agent's accept or skip of a preview offer (app/campaigns/preview.py): Redis says
    whether it was this agent's and still open; the dialer acts on it within a second."""
    offer_id = body.get("offerId") or ctx.conn.preview_id
    offer = _preview_offers().answer(ctx.conn.account_id, ctx.conn.agent_id, str(offer_id), choice) \
        if offer_id else None
    if offer is None:
        raise ProtocolError(protocol.NO_OFFER, "No such offer is open.")
    if ctx.conn.preview_id == offer.offer_id:
        ctx.conn.preview_id = None
    return offer


def _skip(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """A preview offer declined: the contact returns to the campaign's pool (a skip is
    counted) and the agent is offered the next one."""
    offer = _answer_preview(ctx, body, SKIPPED)
    return {"offerId": offer.offer_id, "kind": "preview"}


def _accept(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """The agent takes the offer: ``call`` phase ``connecting``. The agent's endpoint answers
    the ringing leg itself (the SDK answers its WSS leg; a desk phone is picked up): a SIP
    leg cannot be answered from the server side. ``connected`` follows on ``agent.accept``.
    A preview offer accepted: the dialer dials the customer (``callId`` in the ack), and the
    agent's phone rings when the customer answers."""
    if _is_preview(ctx, body):
        offer = _answer_preview(ctx, body, ACCEPTED)
        return {"offerId": offer.offer_id, "kind": "preview", "callId": offer.call_id}
    offer_id = _offer_id(ctx, body)
    ctx.conn.send(protocol.message("call", phase="connecting", callId=offer_id))
    return {"offerId": offer_id}


def _engaged_leg(ctx: CommandContext) -> Optional[tuple[str, str]]:
    """(call id, leg id) of the agent's leg, from the queue's engaged mark (Redis): the truth
    even when this socket missed an event."""
    return default_presence().agent_leg(ctx.conn.account_id, ctx.conn.agent_id)


def _control(ctx: CommandContext, call_id: str, leg_id: str, action: str, **fields: Any) -> None:
    with tenant_db() as db:
        request_control(db, ControlRequest(account_id=ctx.conn.account_id, call_id=call_id, leg_id=leg_id,
                                           action=action, agent_id=ctx.conn.agent_id, **fields))


def _reject(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """End the agent's ringing leg with CALL_REJECTED: the queue verb publishes
    ``agent.reject`` (not a miss) and offers the caller to the next agent. A consulted
    agent's offer (kind ``consult``) is rejected through the controller driving the caller's
    call (``_reject_consult``)."""
    leg = _engaged_leg(ctx)
    offer_id = body.get("offerId") or ctx.conn.offer_id or (leg[0] if leg else None)
    if leg is None or leg[0] != offer_id or ctx.conn.call_id == offer_id:
        consulted = default_presence().consulted_leg(ctx.conn.account_id, ctx.conn.agent_id)
        if consulted is not None and offer_id is not None:
            return _reject_consult(ctx, offer_id, consulted)
        raise ProtocolError(protocol.NO_OFFER, "No such offer is ringing.")
    _control(ctx, leg[0], leg[1], "kill", cause="CALL_REJECTED")
    return {"offerId": offer_id}


def _reject_consult(ctx: CommandContext, offer_id: Any, leg_id: str) -> dict[str, Any]:
    """The consulted agent declines the consultation (its engaged mark is the consulted leg:
    Redis, not the socket, says it is consulted): the controller driving the caller's call
    (``offerId``) checks the consultation is this agent's and still ringing, ends the leg and
    gives the consulting agent its caller back (app/voice/consult_actions.consult_reject)."""
    try:
        call_id = str(uuid.UUID(str(offer_id)))
    except ValueError:
        raise ProtocolError(protocol.NO_OFFER, "No such offer is ringing.") from None
    try:
        live.send(live.control_redis(), get_settings().redis_key_prefix, ctx.conn.account_id, call_id,
                  "consult_reject", {"legId": leg_id}, by={"agentId": ctx.conn.agent_id})
    except (NotFound, Conflict):  # not (or no longer) this agent's ringing consultation
        raise ProtocolError(protocol.NO_OFFER, "No such offer is ringing.") from None
    return {"offerId": call_id, "kind": "consult"}


def _live_leg(ctx: CommandContext) -> tuple[str, str]:
    """The agent's leg of the call it is connected to (not one still ringing: that is
    ``reject``)."""
    leg = _engaged_leg(ctx)
    if leg is None or ctx.conn.offer_id == leg[0]:
        raise ProtocolError(protocol.NO_CALL, "You are not on a call.")
    return leg


def _hangup(ctx: CommandContext, _body: dict[str, Any]) -> dict[str, Any]:
    call_id, leg_id = _live_leg(ctx)
    _control(ctx, call_id, leg_id, "kill", cause="NORMAL_CLEARING")
    return {"callId": call_id}


def _hold(held: bool) -> Handler:
    """hold / unhold the agent's leg (``uuid_hold``): the caller hears the hold music."""

    def handler(ctx: CommandContext, _body: dict[str, Any]) -> dict[str, Any]:
        call_id, leg_id = _live_leg(ctx)
        if held:  # FreeSWITCH 1.10.12: a hold right after the bridge loses its unhold (below)
            settle = HOLD_SETTLE_SECONDS - (time.monotonic() - ctx.conn.connected_at)
            if 0 < settle <= HOLD_SETTLE_SECONDS:
                gevent.sleep(settle)
        _control(ctx, call_id, leg_id, "hold" if held else "unhold")
        ctx.conn.send(protocol.message("media", state="held" if held else "connected", callId=call_id))
        return {"callId": call_id}

    return handler


def _dtmf(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    digits = dtmf_digits(body)
    call_id, leg_id = _live_leg(ctx)
    _control(ctx, call_id, leg_id, "dtmf", digits=digits)
    return {"callId": call_id}


def _target(body: dict[str, Any], kinds: tuple[str, ...] = KINDS) -> TransferTarget:
    try:
        target = parse_target(body.get("target"))
    except InvalidTarget as exc:
        raise ValidationFailed(str(exc), code="validation_failed") from None
    if target.kind not in kinds:
        raise ValidationFailed(f"'target' 'type' is one of {', '.join(kinds)} here.", code="validation_failed")
    return target


def _on_caller(ctx: CommandContext, action: str, params: dict[str, Any]) -> str:
    """Ask the controller driving the agent's caller to do ``action`` (app/voice/live_actions.py,
    app/voice/consult_actions.py); returns once it is done on the switch (the call's id)."""
    call_id, _leg_id = _live_leg(ctx)
    live.send(live.control_redis(), get_settings().redis_key_prefix, ctx.conn.account_id, call_id,
              action, params, by={"agentId": ctx.conn.agent_id})
    return call_id


def _transfer(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """Blind transfer of the agent's caller (``target``: app/calls/transfers.py): the
    controller driving the caller's call does it before the ack (app/voice/live_actions.transfer).
    The agent's leg is hung up; ``call`` phase ``transferred`` follows (relay)."""
    target = _target(body)
    return {"callId": _on_caller(ctx, "transfer", {"target": target.as_dict()}), "target": target.as_dict()}


def _consult(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """Attended transfer, first step: the caller holds while the agent's phone is connected
    to ``target`` once it answers (app/voice/consult_actions.consult)."""
    target = _target(body, CONSULT_KINDS)
    return {"callId": _on_caller(ctx, "consult", {"target": target.as_dict()}), "target": target.as_dict()}


def _consult_end(action: str) -> Handler:
    """completeTransfer (the caller goes to the consulted party, the agent's leg is hung up),
    cancelConsult (the consulted party is hung up, the agent has its caller again) and swap
    (the agent toggles between the two; the other holds with music); conference, leave and
    endAll (a three-way call: app/voice/three_way_actions.py)."""

    def handler(ctx: CommandContext, _body: dict[str, Any]) -> dict[str, Any]:
        return {"callId": _on_caller(ctx, action, {})}

    return handler


def _disposition(ctx: CommandContext, body: dict[str, Any]) -> dict[str, Any]:
    """The wrap-up code on the agent's interaction (app/contact/interactions.set_disposition):
    of ``callId`` when given, else of the call the agent is on or had last. When that call was
    a campaign's attempt, the code (and the optional ``note``) also goes on the contact it
    dialled (app/campaigns/dispositions.py; the admin route's service), in the same transaction:
    both or neither."""
    call_id = body.get("callId")
    try:
        call_uuid = uuid.UUID(call_id) if call_id is not None else None
    except (TypeError, ValueError, AttributeError):
        raise ValidationFailed("'callId' must be a call id.", code="validation_failed") from None
    account_id, note = uuid.UUID(ctx.conn.account_id), body.get("note")
    with tenant_db() as db:
        done = interactions.set_disposition(db, account_id, uuid.UUID(ctx.conn.agent_id),
                                            body.get("code"), call_id=call_uuid)
        dialled = None
        if done.call_id is not None:
            presence = default_presence()
            dialled = campaign_dispositions.contact_of_call(db, presence.redis, presence.prefix, account_id,
                                                            done.call_id)
        if dialled is not None:
            campaign_dispositions.contact_code(done.code, note)
            try:
                campaigns_service.set_disposition(db, account_id, dialled.campaign_id, dialled.contact_id,
                                                  done.code, note)
            except NotFound:  # the contact or its campaign was deleted since: the interaction keeps it
                dialled = None
    ack: dict[str, Any] = {"callId": str(done.call_id) if done.call_id else None, "code": done.code}
    if dialled is not None:
        ack.update(campaignId=str(dialled.campaign_id), contactId=str(dialled.contact_id))
    return ack


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
    "reject": _reject,
    "skip": _skip,
    "hangup": _hangup,
    "hold": _hold(True),
    "unhold": _hold(False),
    "mute": _media("muted"),
    "unmute": _media("connected"),
    "dtmf": _dtmf,
    "disposition": _disposition,
    "transfer": _transfer,
    "consult": _consult,
    "completeTransfer": _consult_end("consult_complete"),
    "cancelConsult": _consult_end("consult_cancel"),
    "swap": _consult_end("consult_swap"),
    "conference": _consult_end("conference"),
    "leave": _consult_end("conference_leave"),
    "endAll": _consult_end("conference_end"),
}
