"""conference → ``conference <account>-<name>@default+flags{mute|wait-mod|moderator|endconf}``.

Conference names are global in FreeSWITCH, so the account id is prefixed: two tenants using
the same name never meet. Flags: muted → ``mute``; startOnEnter=false → ``wait-mod`` (the
member hears hold music until a moderator joins), startOnEnter=true → ``moderator``;
endOnExit → ``endconf``. maxParticipants → ``set conference_max_members=<n>`` before joining:
read when the conference is created, so it applies when this caller opens the room (documented
limitation). record → ``record_session`` on this caller's leg before joining (stereo: the
caller left, what the room sends them right), whoever opened the room; it is reported like every
recording (app/verbs/recording.py): the room's own recording (conference_auto_record) has no
channel, so its stop event never reaches this call's socket.
The conference application returns when the caller leaves.
"""
from __future__ import annotations

from marshmallow import validate

from app import limits
from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import StrictBoolean, StrictInteger, Text
from app.verbs.recording import prepare_recording, recording_path, report_when_stopped

CONFERENCE_PROFILE = "default"
RECORDING_FORMAT = "wav"
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
            path = recording_path(ctx, RECORDING_FORMAT)
            report_when_stopped(ctx, path, fmt=RECORDING_FORMAT, stereo=True)
            prepare_recording(ctx, stereo=True)
            ctx.execute("record_session", path)
        arg = f"{self.room(ctx)}@{CONFERENCE_PROFILE}+flags{{{'|'.join(self.flags())}}}"
        ctx.execute("conference", arg)
        return VerbOutcome.end("conference_left", room=self.room(ctx))
