"""``POST /api/calls/:callId/supervise`` and ``DELETE …/supervise``: a supervisor listens to,
whispers to (coaches) or barges into an agent's live call.

Who: role ``admin`` or ``supervisor`` of the call's account (an agent cannot listen to a
colleague). Where the supervisor is rung: by default the phone of the supervisor's own agent
profile (the SIP user its credentials registered on the ``internal`` profile); ``target``
names another SIP user of the account's directory. Both must be registered now: the check is
the same live registration the queue uses (app/contact/presence.py).

The call must be this account's (another tenant's call id is 404 like an unknown one), live,
and bridged to an agent's phone (the queue verb, a ``dial`` to a directory user, a callback's
agent leg mark it: app/calls/supervision.py). The work is done by a controller
(``call.supervise``, written to the outbox in the request's transaction): the answer is 202 and
the outcome arrives as ``call.control.start`` / ``call.control.stop``.
"""
from __future__ import annotations

import time
import uuid
from typing import Any, Optional

import redis
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import limits
from app.api.security import Identity
from app.calls import supervision as sv
from app.calls.limiter import holds_call
from app.contact.presence import Presence
from app.errors import Conflict, Forbidden, NotFound, SbcError
from app.events.payloads import call_supervise, emit
from app.models import Account, Agent

SUPERVISOR_ROLES = frozenset({"admin", "supervisor"})


class SupervisionUnavailable(SbcError):
    """Redis (live calls, registrations) cannot be read: nothing can be decided."""
    status, code = 503, "supervision_unavailable"


def require_supervisor(me: Identity) -> None:
    if me.role not in SUPERVISOR_ROLES:
        raise Forbidden("Only a supervisor or an administrator can supervise calls.",
                        code="supervisor_required", details={"roles": sorted(SUPERVISOR_ROLES)})


def _call_leg(client: redis.Redis, prefix: str, account_id: uuid.UUID, call_id: uuid.UUID) -> sv.AgentLeg:
    """The call's agent leg: 404 unknown/ended/another tenant's, 409 live without an agent."""
    leg = sv.read_agent_leg(client, prefix, str(call_id))
    live = holds_call(client, account_id, call_id, key_prefix=prefix)
    if leg is not None and leg.account_id == str(account_id):
        if live:
            return leg
        # the mark outlived its call (its controller died mid-bridge): the limiter slot, which
        # a live call's controller keeps refreshing, says the call is over
        sv.clear_agent_leg(client, prefix, str(call_id))
        leg = None
    if leg is None and live:
        raise Conflict("The call has no answered agent leg yet (IVR, waiting in a queue, or the "
                       "agent's phone is still ringing).", code="no_agent_leg")
    raise NotFound("No such live call.", code="call_not_found")


def _endpoint(db: Session, me: Identity, target: Optional[dict[str, Any]], presence: Presence,
              switch: str = "") -> tuple[str, Optional[uuid.UUID]]:
    """``user/<sip user>@<subdomain>`` for the supervisor, and that phone's agent id."""
    domain = db.scalar(select(Account.subdomain).where(Account.id == me.account_id))
    if target is None:
        row = db.execute(select(Agent.id, Agent.sip_username).where(
            Agent.account_id == me.account_id, Agent.user_id == me.user_id)).first()
        if row is None or not row.sip_username:
            raise Conflict("You have no phone to be rung on: give yourself an agent profile with "
                           "SIP credentials, or name a registered SIP user as 'target'.",
                           code="supervisor_has_no_phone")
        agent_id, sip_user = row.id, row.sip_username
    else:
        sip_user = target["name"]
        agent_id = db.scalar(select(Agent.id).where(Agent.account_id == me.account_id,
                                                     Agent.sip_username == sip_user))
        if agent_id is None:  # not this account's directory: never another tenant's phone
            raise NotFound("No such SIP user in this account.", code="sip_user_not_found",
                           details={"target": sip_user})
    registered_on = presence.redis.get(presence.reg_key(domain, sip_user))
    if registered_on is None:
        raise Conflict("The supervisor's phone is not registered.", code="supervisor_not_registered",
                       details={"sip_username": sip_user})
    node = registered_on.decode()
    if switch and node not in ("-", switch):  # user/ resolves only on the switch it registered with
        raise Conflict("The supervisor's phone is registered with another FreeSWITCH node than the "
                       "call's.", code="supervisor_on_another_switch", details={"sip_username": sip_user})
    return f"user/{sip_user}@{domain}", agent_id


def start(db: Session, client: redis.Redis, prefix: str, me: Identity, call_id: uuid.UUID,
          data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A new supervision (202), a mode change of this supervisor's active one (202), or the
    same mode again (200, nothing done)."""
    mode = data["mode"]
    try:
        leg = _call_leg(client, prefix, me.account_id, call_id)
        current = sv.read_supervision(client, prefix, str(call_id), str(me.user_id))
        if current is not None:
            return _change_mode(db, client, prefix, me, leg, current, mode)
        endpoint, phone_agent = _endpoint(db, me, data.get("target"), Presence(client, prefix), leg.switch)
        if phone_agent is not None and leg.agent_id == str(phone_agent):
            raise Conflict("That phone is the call's own agent.", code="cannot_supervise_own_call")
        record = sv.Supervision(
            id=sv.new_supervision_id(), call_id=str(call_id), account_id=str(me.account_id),
            supervisor_id=str(me.user_id), agent_id=leg.agent_id, mode=mode, state=sv.DIALING,
            endpoint=endpoint, started=time.time())
        if not sv.claim_supervision(client, prefix, record):  # a second click meanwhile
            current = sv.read_supervision(client, prefix, str(call_id), str(me.user_id))
            if current is None:
                raise Conflict("Try again.", code="supervision_busy")
            return _change_mode(db, client, prefix, me, leg, current, mode)
    except redis.RedisError:
        raise SupervisionUnavailable("Live calls cannot be read right now.") from None
    _command(db, me, leg, record, sv.START, mode, timeout=data["timeout"])
    return 202, _view(record)


def _change_mode(db: Session, client: redis.Redis, prefix: str, me: Identity, leg: sv.AgentLeg,
                 current: sv.Supervision, mode: str) -> tuple[int, dict[str, Any]]:
    if current.mode == mode:
        return 200, _view(current)
    if current.state != sv.ACTIVE:
        raise Conflict("The supervisor's phone has not answered yet; change the mode once it has.",
                       code="supervision_not_active", details={"state": current.state})
    _command(db, me, leg, current, sv.MODE, mode)
    return 202, {**_view(current), "mode": mode, "previous_mode": current.mode}


def stop(db: Session, client: redis.Redis, prefix: str, me: Identity, call_id: uuid.UUID) -> None:
    """End this supervisor's supervision of the call (its leg is hung up): 404 when there is none."""
    require_supervisor(me)
    try:
        current = sv.read_supervision(client, prefix, str(call_id), str(me.user_id))
        if current is None or current.account_id != str(me.account_id):
            raise NotFound("You are not supervising this call.", code="supervision_not_found")
        leg = sv.read_agent_leg(client, prefix, str(call_id)) or sv.AgentLeg(
            str(call_id), str(me.account_id), current.agent_id, "", "", 0.0)
    except redis.RedisError:
        raise SupervisionUnavailable("Live calls cannot be read right now.") from None
    _command(db, me, leg, current, sv.STOP, current.mode)


def _command(db: Session, me: Identity, leg: sv.AgentLeg, record: sv.Supervision, action: str,
             mode: str, timeout: Optional[int] = None) -> None:
    emit("call.supervise", call_supervise(
        action=action, supervision_id=record.id, call_id=record.call_id, supervisor_id=me.user_id,
        agent_id=leg.agent_id or None, mode=mode, endpoint=record.endpoint,
        timeout_seconds=timeout or limits.SUPERVISOR_RING_SECONDS),
        account_id=me.account_id, trace_id=leg.trace_id or None, session=db)


def _view(record: sv.Supervision) -> dict[str, Any]:
    return {"supervision_id": record.id, "call_id": record.call_id, "mode": record.mode,
            "state": record.state, "supervisor_id": record.supervisor_id,
            "agent_id": record.agent_id or None, "endpoint": record.endpoint}
