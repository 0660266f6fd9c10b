"""redirect → fetch the next instructions from another URL and run them instead of the rest."""
from __future__ import annotations

from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import HookUrl


class RedirectSchema(VerbSchema):
    url = HookUrl(required=True)


class Redirect(Verb):
    """redirect → fetch instructions from ``url`` (posted like the first request) and run them
    in place of the rest of the list."""

    name = "redirect"
    schema_class = RedirectSchema

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        return VerbOutcome.replace(ctx.fetch_instructions(self.params["url"], {}))
