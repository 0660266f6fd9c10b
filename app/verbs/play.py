"""play → ``playback http_cache://<https url>``, repeated ``loop`` times.

mod_http_cache downloads the file once and serves it from its disk cache afterwards (it honours
Cache-Control max-age); WAV is read natively, MP3 through mod_shout.
"""
from __future__ import annotations

from marshmallow import validate

from app import limits
from app.verbs.base import PartSchema, Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import StrictInteger, https_url
from app.verbs.media_guard import check_media_url


def play_file(url: str) -> str:
    return f"http_cache://{url}"


class PlayFields(PartSchema):
    url = https_url(required=True)
    loop = StrictInteger(load_default=1, validate=validate.Range(min=1, max=limits.VERB_LOOP_MAX))


class PlaySchema(VerbSchema, PlayFields):
    """``play`` as a verb; ``PlayFields`` alone is gather's nested prompt."""


class Play(Verb):
    name = "play"
    schema_class = PlaySchema

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        check_media_url(self.name, self.params["url"])
        for _ in range(self.params["loop"]):
            ctx.execute("playback", play_file(self.params["url"]))
        return VerbOutcome.cont()
