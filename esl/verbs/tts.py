"""Text to speech with mod_flite (offline, bundled in the FreeSWITCH image).

flite ships English (en-US) voices only: kal, kal16, slt, rms, awb. A verb's ``voice`` must be
one of them (a clear error beats a silent substitution); an application default that is not a
flite voice falls back to ``kal``. ``language`` is validated and kept, but flite speaks every
language with its English voices — documented in docs/verbs.md.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import re

from esl.verbs.fsargs import plain_text

if TYPE_CHECKING:  # pragma: no cover
    from esl.verbs.context import VerbContext

ENGINE = "flite"
FLITE_VOICES = ("kal", "kal16", "slt", "rms", "awb")
DEFAULT_VOICE = "kal"
LANGUAGE_PATTERN = r"^[a-zA-Z]{2,3}(-[A-Za-z0-9]{2,8})*$"


def resolve_voice(ctx: "VerbContext", voice: Optional[str]) -> str:
    if voice:
        return voice
    default = getattr(ctx.application, "voice", None)
    return default if default in FLITE_VOICES else DEFAULT_VOICE


_SPACES = re.compile(r" {2,}")


def speak_arg(voice: str, text: str) -> str:
    """``speak`` data: ``flite|<voice>|<text>`` (capture outbound_speak_flite).

    FreeSWITCH 1.10's speak takes the text as the *unstripped* remainder after the second ``|``
    (mod_dptools speak_function), so backslash escapes would be spoken literally; older
    releases split further on ``|``. A ``|`` has no sound, so it becomes a space: safe for both.
    """
    return f"{ENGINE}|{voice}|{_SPACES.sub(' ', plain_text(text).replace('|', ' '))}"


def say_prompt(ctx: "VerbContext", voice: str, text: str) -> str:
    """A TTS prompt in file-string form for play_and_get_digits / play_and_detect_speech.

    switch_ivr_play_file() reads ``say:<text>`` and speaks it with the engine and voice of the
    channel variables ``tts_engine`` / ``tts_voice``; without both it logs "Invalid Args" and
    plays nothing (the real switch refused ``say:flite:<voice>:<text>`` that way). So this
    sets them on the channel first and returns the file string.
    """
    ctx.set_var("tts_engine", ENGINE)
    ctx.set_var("tts_voice", voice)
    return f"say:{_SPACES.sub(' ', plain_text(text))}"
