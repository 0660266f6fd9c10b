"""gather → DTMF with ``play_and_get_digits``; speech with ``play_and_detect_speech``.

DTMF (capture outbound_gather_dtmf): ``play_and_get_digits <min> <max> <tries> <timeout_ms>
<terminators> <prompt> <invalid> <var> <regex>``; the digits come back only as
``variable_<var>`` on CHANNEL_EXECUTE_COMPLETE, the terminator is not included.

Speech: ``play_and_detect_speech <prompt> detect:pocketsphinx gather`` (offline
mod_pocketsphinx, grammar ``gather``); the recognised text is read from the NLSML in
``variable_detect_speech_result``. mod_dptools takes the prompt as everything before the first
``detect:``, unquoted (a quoted prompt is a file name with quotes: "ERROR" at once), so the
prompt is written as is and a ``detect:`` inside the text is broken up.

Prompts: ``say`` → ``say:<text>`` with the channel's tts_engine/tts_voice (app/verbs/tts.py),
``play`` → ``http_cache://<url>``, none → ``silence_stream://250`` (mod_tone_stream). With ``input: [dtmf, speech]`` the caller gets the prompt
with DTMF collection first; only if no digit came is speech listened for (without replaying the
prompt). Documented in docs/verbs.md.

With an ``actionHook`` the result is POSTed (``digits``, ``speech``, ``reason``) and the reply
replaces the rest of the list; without one the list continues. Flows branch on the result
(``collect``).

``reason`` says why the gather returned, so an application can tell a timeout from an empty
entry: ``speech`` (words recognised), ``finishOnKey`` (the caller pressed the finish key, with
or without digits before it), ``digits`` (``numDigits`` reached, or digits then the timeout), or
``timeout`` (nothing usable came). The finish key is read from FreeSWITCH's
``read_terminator_used``, which ``switch_ivr_read`` sets but never clears (and ``read_result``
is ``failure`` for both an empty entry and a timeout when at least one digit is required): the
gather clears it before ``play_and_get_digits``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from marshmallow import ValidationError, fields, validate, validates_schema

from app import limits
from app.verbs import tts
from app.verbs.base import Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import HookUrl, StrictInteger, StrictNumber, Text
from app.verbs.fsargs import quote_arg
from app.verbs.media_guard import check_media_url
from app.verbs.play import PlayFields, play_file
from app.verbs.say import SayFields

DIGITS_VAR = "sbc_gather_digits"
TERMINATOR_VAR = "read_terminator_used"  # set by switch_ivr_read, never cleared by it
DIGITS_REGEX = r"[0-9*#]+"
INVALID_FILE = "silence_stream://250"
SILENT_PROMPT = "silence_stream://250"
DETECT_MARK = "detect:"  # where play_and_detect_speech splits its data
SPEECH_ENGINE = "pocketsphinx"
SPEECH_GRAMMAR = "gather"
_NLSML_INPUT = re.compile(r"<input[^>]*>(.*?)</input>", re.S | re.I)


REASONS = ("digits", "speech", "timeout", "finishOnKey")


@dataclass(frozen=True)
class GatherResult:
    digits: str = ""
    speech: str = ""
    finish_key: bool = False  # the caller ended the entry with finishOnKey

    @property
    def reason(self) -> str:
        """Why the gather returned (one of REASONS; module docstring)."""
        if self.speech:
            return "speech"
        if self.finish_key:
            return "finishOnKey"
        return "digits" if self.digits else "timeout"


class GatherSchema(VerbSchema):
    input = fields.List(Text(validate=validate.OneOf(("dtmf", "speech"))),
                        load_default=lambda: ["dtmf"],
                        validate=validate.Length(min=1, max=2))
    numDigits = StrictInteger(validate=validate.Range(min=1, max=limits.GATHER_MAX_DIGITS))
    timeout = StrictNumber(load_default=limits.GATHER_DEFAULT_TIMEOUT_SECONDS,
                           validate=validate.Range(min=0, min_inclusive=False,
                                                   max=limits.GATHER_MAX_TIMEOUT_SECONDS))
    finishOnKey = Text(load_default=limits.GATHER_DEFAULT_FINISH_ON_KEY, pattern=r"^[0-9*#]?$",
                       pattern_message="Must be one of 0-9, * or #, or empty for none.")
    say = fields.Nested(SayFields)
    play = fields.Nested(PlayFields)
    actionHook = HookUrl()

    json_schema_extra = {
        "not": {"required": ["say", "play"]},
        "properties": {"input": {"uniqueItems": True}},
    }

    @validates_schema
    def _one_prompt(self, data: dict, **_: object) -> None:
        if "say" in data and "play" in data:
            raise ValidationError("Give either say or play as the prompt, not both.", "play")
        if len(set(data.get("input", []))) != len(data.get("input", [])):
            raise ValidationError("Each input may appear once.", "input")


class Gather(Verb):
    name = "gather"
    schema_class = GatherSchema

    def prompt_file(self, ctx: VerbContext) -> str:
        say, play = self.params.get("say"), self.params.get("play")
        if say:
            return tts.say_prompt(ctx, tts.resolve_voice(ctx, say.get("voice"), say.get("language")), say["text"])
        if play:
            return play_file(play["url"])
        return SILENT_PROMPT

    def _tries(self) -> int:
        prompt = self.params.get("say") or self.params.get("play") or {}
        return min(int(prompt.get("loop", 1)), limits.GATHER_PROMPT_MAX_TRIES)

    def dtmf_arg(self, ctx: VerbContext) -> str:
        num = self.params.get("numDigits")
        min_digits, max_digits = (num, num) if num else (1, limits.GATHER_MAX_DIGITS)
        timeout_ms = int(round(self.params["timeout"] * 1000))
        terminators = self.params["finishOnKey"] or "none"
        return " ".join([str(min_digits), str(max_digits), str(self._tries()), str(timeout_ms),
                         terminators, quote_arg(self.prompt_file(ctx)), INVALID_FILE,
                         DIGITS_VAR, DIGITS_REGEX])

    def speech_arg(self, prompt: str) -> str:
        """``<prompt> detect:pocketsphinx {no-input-timeout=<timeout ms>}gather``: the grammar's
        ``{...}`` parameters go to the recogniser; play_and_detect_speech starts its input timers
        when the prompt has played, so a caller who says nothing gets ``<noinput/>`` after the
        gather's own timeout, not pocketsphinx's default 4 s."""
        unsplittable = prompt.replace(DETECT_MARK, "detect :")
        timeout_ms = int(round(self.params["timeout"] * 1000))
        return (f"{unsplittable} {DETECT_MARK}{SPEECH_ENGINE} "
                f"{{no-input-timeout={timeout_ms}}}{SPEECH_GRAMMAR}")

    def collect(self, ctx: VerbContext) -> GatherResult:
        inputs = self.params["input"]
        digits = speech = ""
        finish_key = False
        prompt_played = False
        if "dtmf" in inputs:
            if self.params["finishOnKey"]:
                ctx.set_var(TERMINATOR_VAR, "")  # a previous gather's key must not count here
            done = ctx.execute("play_and_get_digits", self.dtmf_arg(ctx))
            # FreeSWITCH sets <var> only when digits came and never clears it, so a second
            # gather without input would still see the first one's digits: trust the variable
            # only when this run's read_result says success.
            if done.variable("read_result") == "success":
                digits = done.variable(DIGITS_VAR) or ""
            finish_key = bool(self.params["finishOnKey"]) and bool(done.variable(TERMINATOR_VAR))
            prompt_played = True
        if "speech" in inputs and not digits and not finish_key:
            prompt = SILENT_PROMPT if prompt_played else self.prompt_file(ctx)
            # play_and_detect_speech clears detect_speech_result itself before listening
            done = ctx.execute("play_and_detect_speech", self.speech_arg(prompt))
            speech = parse_speech(done.variable("detect_speech_result") or "")
        return GatherResult(digits=digits, speech=speech, finish_key=finish_key)

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        if self.params.get("play"):
            check_media_url(self.name, self.params["play"]["url"])
        result = self.collect(ctx)
        hook = self.params.get("actionHook")
        if hook:
            verbs = ctx.fetch_instructions(hook, {"digits": result.digits, "speech": result.speech,
                                                  "reason": result.reason})
            return VerbOutcome.replace(verbs, digits=result.digits, speech=result.speech,
                                       reason=result.reason)
        return VerbOutcome.cont(digits=result.digits, speech=result.speech, reason=result.reason)


def parse_speech(nlsml: str) -> str:
    """Text of the first ``<input>`` of an NLSML result; empty when nothing was recognised,
    including pocketsphinx's ``<input mode="speech"><noinput/></input>`` (timeout, no speech)
    and ``<nomatch/>``."""
    match = _NLSML_INPUT.search(nlsml)
    text = match.group(1).strip() if match else ""
    return "" if text.startswith("<") else text
