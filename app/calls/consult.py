"""Attended transfers: one agent's consultation of a target while its caller holds
(docs/agents.md "Attended transfers").

Why this shape: the caller's leg must stay driven by the session's outbound socket, so every
change to what the caller hears or who it is bridged to is an application the caller's
session executes (hold music, then a two-party ``conference``). The live actions (app/voice/live_actions.py)
only move the *other* legs (the agent's, the consulted party's) and say how the consultation
ended here; the queue verb (app/verbs/consult_hold.py) acts on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from app.calls.transfers import TransferTarget

# who an agent may consult (a queue cannot answer a consultation)
CONSULT_KINDS = ("agent", "number", "sip")
# how a consultation ended: the caller goes to the consulted party, or back to its agent
COMPLETE = "complete"
BACK = "back"
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
