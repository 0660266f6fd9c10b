"""pause → ``sleep <ms>``."""
from __future__ import annotations

from marshmallow import validate

from app import limits
from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import StrictNumber


class PauseSchema(VerbSchema):
    length = StrictNumber(load_default=limits.PAUSE_DEFAULT_SECONDS,
                          validate=validate.Range(min=0, min_inclusive=False, max=limits.PAUSE_MAX_SECONDS))


class Pause(Verb):
    """pause → ``sleep <ms>``."""

    name = "pause"
    schema_class = PauseSchema

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        ctx.execute("sleep", str(int(round(self.params["length"] * 1000))))
        return VerbOutcome.cont()
