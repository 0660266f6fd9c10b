"""Running a verb list on a call: verbs in order, hook replies replace what is left."""
from __future__ import annotations

from typing import Iterable

from app import limits
from app.verbs.base import OutcomeKind, Verb, VerbOutcome
from app.verbs.context import VerbContext


def run_verbs(ctx: VerbContext, verbs: Iterable[Verb],
              max_rounds: int = limits.VERB_MAX_HOOK_ROUNDS) -> VerbOutcome:
    """Execute until the list runs out, a verb ends it, or a hook replaces it.

    Returns the final outcome (END); the caller (the call session) hangs up if the channel is
    still up. esl.errors.ChannelHungUp from any verb propagates unchanged. ``max_rounds`` caps
    hook replacements so a webhook that always answers with a redirect cannot loop forever.
    """
    pending = list(verbs)
    rounds = 0
    while pending:
        verb = pending.pop(0)
        ctx.journey_step(verb.name)
        outcome = verb.execute(ctx)
        if outcome.kind is OutcomeKind.REPLACE:
            rounds += 1
            if rounds > max_rounds:
                return VerbOutcome.end("too_many_hook_rounds", rounds=rounds)
            pending = list(outcome.verbs or [])
        elif outcome.kind is OutcomeKind.END:
            return outcome
    return VerbOutcome.end("list_finished")
