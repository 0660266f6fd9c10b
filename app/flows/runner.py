"""Running a validated flow on a call with the verb classes of app.verbs."""
from __future__ import annotations

from typing import Optional

from app import limits
from app.flows.definition import Flow
from app.verbs import OutcomeKind, VerbContext, VerbOutcome, run_verbs
from app.verbs.gather import Gather


class FlowRunner:
    def __init__(self, flow: Flow, max_steps: int = limits.FLOW_MAX_STEPS) -> None:
        self.flow = flow
        self.max_steps = max_steps
        self.path: list[str] = []  # node ids in the order they ran (call journey)

    def run(self, ctx: VerbContext) -> VerbOutcome:
        """Walk from ``start``; gather nodes route on the input, others follow ``next``.

        A verb that fetches new instructions (redirect) hands the rest of the call to the verb
        list executor. esl.errors.ChannelHungUp propagates.
        """
        node_id: Optional[str] = self.flow.start
        while node_id is not None:
            if len(self.path) >= self.max_steps:
                return VerbOutcome.end("flow_step_limit", path=list(self.path))
            node = self.flow.nodes[node_id]
            self.path.append(node_id)
            ctx.journey_step(node.verb.name, {"node": node_id})
            if isinstance(node.verb, Gather):
                result = node.verb.collect(ctx)
                node_id = node.route(result.digits, result.speech)
                continue
            outcome = node.verb.execute(ctx)
            if outcome.kind is OutcomeKind.REPLACE:
                return run_verbs(ctx, outcome.verbs or [])
            if outcome.kind is OutcomeKind.END:
                return outcome
            node_id = node.next
        return VerbOutcome.end("flow_finished", path=list(self.path))
