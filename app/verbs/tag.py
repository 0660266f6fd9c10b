"""tag → merge key/value data into the call's tags (call record, later hook requests)."""
from __future__ import annotations

from app import limits
from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import JsonObject


class TagSchema(VerbSchema):
    data = JsonObject(required=True, max_keys=limits.TAG_MAX_KEYS, scalar_values=True)


class Tag(Verb):
    """tag → merge ``data`` into the call's tags (call record; posted with later hooks)."""

    name = "tag"
    schema_class = TagSchema

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        ctx.tags.update(self.params["data"])
        return VerbOutcome.cont()
