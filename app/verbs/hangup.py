"""hangup → ctx.hangup("NORMAL_CLEARING", reason); the reason goes to the call record."""
from __future__ import annotations

from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import Text


class HangupSchema(VerbSchema):
    reason = Text(max_length=256)


class Hangup(Verb):
    """hangup → ctx.hangup("NORMAL_CLEARING", reason): the reason goes to the call record."""

    name = "hangup"
    schema_class = HangupSchema

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        ctx.hangup("NORMAL_CLEARING", self.params.get("reason"))
        return VerbOutcome.end("hangup", reason=self.params.get("reason"))
