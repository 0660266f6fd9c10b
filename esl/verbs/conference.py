"""conference → ``conference <account>-<name>@default+flags{mute|wait-mod|moderator|endconf}``.

Conference names are global in FreeSWITCH, so the account id is prefixed: two tenants using
the same name never meet. Flags: muted → ``mute``; startOnEnter=false → ``wait-mod`` (the
member hears hold music until a moderator joins), startOnEnter=true → ``moderator``;
endOnExit → ``endconf``. maxParticipants → ``set conference_max_members=<n>`` and record →
``set conference_auto_record=<path>`` before joining: both are read when the conference is
created, so they apply when this caller opens the room (documented limitation).
The conference application returns when the caller leaves.
"""
from __future__ import annotations

from marshmallow import validate

from app import limits
from esl.verbs.base import Verb, VerbOutcome, VerbSchema
from esl.verbs.context import VerbContext
from esl.verbs.fields import StrictBoolean, StrictInteger, Text
from esl.verbs.record import recording_path

CONFERENCE_PROFILE = "default"
CONFERENCE_NAME_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"


class ConferenceSchema(VerbSchema):
    name = Text(required=True, pattern=CONFERENCE_NAME_PATTERN,
                pattern_message="1-64 letters, digits, '_', '.', '-'.")
    muted = StrictBoolean(load_default=False)
    startOnEnter = StrictBoolean(load_default=True)
    endOnExit = StrictBoolean(load_default=False)
    maxParticipants = StrictInteger(validate=validate.Range(min=1, max=limits.CONFERENCE_MAX_PARTICIPANTS))
    record = StrictBoolean(load_default=False)


class Conference(Verb):
    name = "conference"
    schema_class = ConferenceSchema
    ends_list = True

    def room(self, ctx: VerbContext) -> str:
        return f"{ctx.account_id}-{self.params['name']}"

    def flags(self) -> list[str]:
        p = self.params
        flags = []
        if p["muted"]:
            flags.append("mute")
        flags.append("moderator" if p["startOnEnter"] else "wait-mod")
        if p["endOnExit"]:
            flags.append("endconf")
        return flags

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        p = self.params
        if p.get("maxParticipants"):
            ctx.set_var("conference_max_members", str(p["maxParticipants"]))
        if p["record"]:
            ctx.set_var("conference_auto_record", recording_path(ctx, "wav"))
            ctx.record_feature("has_recording")
        arg = f"{self.room(ctx)}@{CONFERENCE_PROFILE}+flags{{{'|'.join(self.flags())}}}"
        ctx.execute("conference", arg)
        return VerbOutcome.end("conference_left", room=self.room(ctx))
