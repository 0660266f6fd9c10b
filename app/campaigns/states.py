"""The campaign state machine: draft → scheduled → running ⇄ paused → completed → archived.

One explicit table of actions (the API's start/pause/resume/stop/archive and the dialer's
``begin``/``finish``); a transition not in it is refused with the states that would allow it.
Pure: whether the campaign may start at all (trunk, caller ID, agents) is checked by the caller.
Pausing or stopping only stops *new* attempts; calls already placed run to their end.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Transition:
    sources: frozenset[str]
    target: str
    why: str


TRANSITIONS: dict[str, Transition] = {
    # start with a future ``at`` schedules; without one (or a past one) the campaign runs now
    "schedule": Transition(frozenset({"draft", "paused"}), "scheduled", "start at a future time"),
    "start": Transition(frozenset({"draft", "scheduled"}), "running", "start dialling now"),
    "pause": Transition(frozenset({"running", "scheduled"}), "paused", "stop placing new calls for now"),
    "resume": Transition(frozenset({"paused"}), "running", "place calls again"),
    "stop": Transition(frozenset({"scheduled", "running", "paused"}), "completed", "end the campaign for good"),
    # the dialer: a scheduled campaign whose time came, a running one with no contact left
    "begin": Transition(frozenset({"scheduled"}), "running", "its start time came"),
    "finish": Transition(frozenset({"running"}), "completed", "no contact is left to dial"),
    "archive": Transition(frozenset({"draft", "completed"}), "archived", "hide it from the working list"),
}

# PATCH {"status": ...} of the earlier API: the action that reaches that status from the
# current one, so old clients keep working for every legal move. Not ``schedule`` (it needs a
# start time, which only the start action takes) nor the dialer's own moves.
_BY_TARGET: dict[tuple[str, str], str] = {
    (source, t.target): action
    for action, t in TRANSITIONS.items() if action not in ("schedule", "begin", "finish")
    for source in t.sources
}


class IllegalTransition(Exception):
    def __init__(self, action: str, current: str) -> None:
        allowed = sorted(TRANSITIONS[action].sources) if action in TRANSITIONS else []
        super().__init__(f"Cannot {action} a campaign that is {current}"
                         + (f" (only when {', '.join(allowed)})." if allowed else "."))
        self.action, self.current, self.allowed = action, current, allowed


def apply(action: str, current: str) -> str:
    """The state ``action`` leads to from ``current``; IllegalTransition if not allowed."""
    transition = TRANSITIONS.get(action)
    if transition is None or current not in transition.sources:
        raise IllegalTransition(action, current)
    return transition.target


def action_for(current: str, target: str) -> str:
    """The action that moves ``current`` to ``target`` (for PATCH status); IllegalTransition
    (named ``set <target>``) when none does."""
    action = _BY_TARGET.get((current, target))
    if action is None:
        raise IllegalTransition(f"set status {target} on", current)
    return action
