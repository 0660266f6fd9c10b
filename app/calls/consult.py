"""Attended transfers: one agent's consultation of a target while its caller holds
(docs/agents.md "Attended transfers").

Why this shape: the caller's leg must stay driven by the session's outbound socket, so every
change to what the caller hears or who it is bridged to is an application the caller's
session executes (hold music, then a two-party ``conference``). The live actions (app/voice/live_actions.py)
only move the *other* legs (the agent's, the consulted party's) and say how the consultation
ended here; the queue verb (app/verbs/consult_hold.py) acts on it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Optional

from app import limits
from app.calls.transfers import TransferTarget

log = logging.getLogger(__name__)

# who an agent may consult (a queue cannot answer a consultation)
CONSULT_KINDS = ("agent", "number", "sip")
# how a consultation ended: the caller goes to the consulted party, or back to its agent
COMPLETE = "complete"
BACK = "back"
# or the agent added the consulted party to a three-way call with the caller (docs/agents.md
# "Three-way calls"): all three in one room, which the agent may leave
CONFERENCE = "conference"
# set on the consulted party's leg when it answers (api_on_answer): complete needs an answer
ANSWERED_VARIABLE = "sbc_consult_answered"


@dataclass
class Consult:
    """A consultation in progress. ``outcome`` is None until it is completed, cancelled or
    the consulted party's leg ends (its ``api_hangup_hook`` breaks the caller's hold music)."""
    agent_leg: str                 # the consulting agent's leg (parked, then bridged to the target)
    consult_leg: str               # the consulted party's leg (origination_uuid)
    target: TransferTarget
    from_agent: str
    by: dict[str, Any]             # who asked (app/voice/live_actions.Requester)
    outcome: Optional[str] = None
    # an agent target's place in the idle line when it was claimed (ms): put back there when
    # it does not take the caller; None for a number or sip: target
    claimed_since_ms: Optional[int] = None
    # swapped: the agent talks with its caller (in their room) while the consulted party holds
    # with music; toggled by the ``consult_swap`` action
    swapped: bool = False
    # the agent cancelled it (``consult_cancel``): why an agent target's offer is withdrawn
    cancelled: bool = False
    # the consulted agent rejected its offer (``consult_reject``, its channel's ``reject``)
    rejected: bool = False
    # each meeting of the caller and a leg has its own room (a room ended by ``endconf`` may
    # still be tearing down when the next meeting begins)
    rooms: int = 0
    # during a three-way call: what the caller's session does when the agent leaves it (its
    # window closes, it is released, the consulted agent takes the caller: app/verbs/three_way.py)
    on_leave: Optional[Callable[[datetime], None]] = None
    left_at: Optional[datetime] = None

    @property
    def left(self) -> bool:
        """The first agent left the three-way call."""
        return self.left_at is not None


# an agent target's ``offer`` of kind ``consult`` withdrawn (docs/agents.md "offer")
WITHDRAWN_CANCELLED = "cancelled"
WITHDRAWN_MISSED = "missed"
WITHDRAWN_CALLER_LEFT = "caller_left"
WITHDRAWN_REJECTED = "rejected"


def back_reason(consult: Consult) -> str:
    """Why a consultation ended with the agent back with its caller: ``cancelled`` (its own
    ``cancelConsult``), ``rejected`` (the consulted agent's ``reject``) or ``missed`` (not
    answered in time, refused by the phone, or the consulted party hung up)."""
    if consult.cancelled:
        return WITHDRAWN_CANCELLED
    return WITHDRAWN_REJECTED if consult.rejected else WITHDRAWN_MISSED


def consult_offer(ctx: Any, consult: Consult) -> dict[str, Any]:
    """``agent.consult.offer``'s payload: the agent target's phone rings for a consultation."""
    return {"callId": ctx.call_id, "traceId": ctx.trace_id, "accountSid": ctx.account_id,
            "agentId": consult.target.value, "fromAgentId": consult.from_agent, "legId": consult.consult_leg,
            "from": ctx.from_number or None, "to": ctx.to_number or None,
            "timeoutSeconds": limits.CONSULT_RING_SECONDS}


def withdraw_offer(ctx: Any, consult: Consult, reason: str) -> None:
    """``agent.consult.withdrawn``: an agent target did not take the caller (its offer, or the
    call it accepted, ends on its agent channel). Nothing for a number or ``sip:`` target."""
    if consult.target.kind != "agent":
        return
    ctx.publish("agent.consult.withdrawn", {"callId": ctx.call_id, "traceId": ctx.trace_id,
                                            "accountSid": ctx.account_id, "agentId": consult.target.value,
                                            "legId": consult.consult_leg, "reason": reason})


def consult_failed(ctx: Any, consult: Consult, reason: str) -> None:
    """``agent.consult.failed``: the consulting agent's consultation ended without it asking
    (``rejected`` by the consulted agent, or ``missed``) and it has its caller again; its
    channel gets ``consult`` phase ``failed`` (docs/agents.md "Attended transfers")."""
    ctx.publish("agent.consult.failed", {"callId": ctx.call_id, "traceId": ctx.trace_id,
                                         "accountSid": ctx.account_id, "agentId": consult.from_agent,
                                         "to": consult.target.as_dict(), "legId": consult.consult_leg,
                                         "reason": reason})


def release_target(contact: Any, account_id: str, consult: Consult) -> None:
    """A claimed agent target that did not take the caller (cancelled, not answered, hung up,
    the caller left) goes back to its place in the idle line (app.contact.distribution.ContactCentre)."""
    if consult.claimed_since_ms is None or contact is None:
        return
    try:
        contact.consult_over(account_id, consult.target.value, consult.consult_leg, consult.claimed_since_ms)
    except Exception:  # Redis or the database away: the engaged mark expires by itself
        log.warning("agent %s: not released after a consultation", consult.target.value, exc_info=True)
