"""say → ``speak flite|<voice>|<text>``, repeated ``loop`` times."""
from __future__ import annotations

from marshmallow import validate

from app import limits
from app.verbs import tts
from app.verbs.base import PartSchema, Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import StrictInteger, Text


class SayFields(PartSchema):
    text = Text(required=True, min_length=1, max_length=limits.SAY_TEXT_MAX_CHARS)
    language = Text(pattern=tts.LANGUAGE_PATTERN, pattern_message="Must be a language tag like en-US.")
    voice = Text(min_length=1, max_length=64)  # resolved, never refused (app/verbs/tts.py)
    loop = StrictInteger(load_default=1, validate=validate.Range(min=1, max=limits.VERB_LOOP_MAX))


class SaySchema(VerbSchema, SayFields):
    """``say`` as a verb; ``SayFields`` alone is gather's nested prompt."""


class Say(Verb):
    name = "say"
    schema_class = SaySchema

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        voice = tts.resolve_voice(ctx, self.params.get("voice"), self.params.get("language"))
        arg = tts.speak_arg(voice, self.params["text"])
        for _ in range(self.params["loop"]):
            ctx.execute("speak", arg)
        return VerbOutcome.cont()
