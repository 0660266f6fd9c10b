"""Text to speech with mod_flite (offline, bundled in the FreeSWITCH image).

flite ships English (en-US) voices only: kal, kal16, slt, rms, awb. Replies written for other
platforms name voices flite does not have, and refusing the whole reply for that left callers
with an apology instead of the message. So a verb's ``voice`` is resolved, never refused:
a flite voice is used as is, the generic names people write (man/male, woman/female) map to a
flite voice of that kind, and anything else falls back to the application's default voice with
a warning in the call's journey. A non-English ``language`` is spoken by the best voice there is
(an English one) and noted in the journey — documented in docs/verbs.md.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from app.verbs.fsargs import plain_text

if TYPE_CHECKING:  # pragma: no cover
    from app.verbs.context import VerbContext

ENGINE = "flite"
FLITE_VOICES = ("kal", "kal16", "slt", "rms", "awb")
DEFAULT_VOICE = "kal"
LANGUAGE_PATTERN = r"^[a-zA-Z]{2,3}(-[A-Za-z0-9]{2,8})*$"


# generic voice names -> the flite voice of that kind (kal: male US English, slt: female)
VOICE_ALIASES = {"man": "kal", "male": "kal", "woman": "slt", "female": "slt"}
# what "English" means for a language tag: flite's voices speak it natively
_ENGLISH = "en"


def default_voice(ctx: "VerbContext") -> str:
    default = getattr(ctx.application, "voice", None)
    return default if default in FLITE_VOICES else DEFAULT_VOICE


def resolve_voice(ctx: "VerbContext", voice: Optional[str], language: Optional[str] = None) -> str:
    """The flite voice to speak with; substitutions and non-English languages are noted in the
    call's journey (``voice:<asked>-><used>``, ``language:<tag>-><voice>``)."""
    if not voice:
        chosen = default_voice(ctx)
    elif voice in FLITE_VOICES:
        chosen = voice
    elif voice.lower() in VOICE_ALIASES:
        chosen = VOICE_ALIASES[voice.lower()]
    else:
        chosen = default_voice(ctx)
        ctx.journey_note(f"warning:voice {_SPACES.sub(' ', plain_text(voice))[:64]}->{chosen}")
    if language and language.split("-")[0].lower() != _ENGLISH:
        ctx.journey_note(f"note:language {language}->{chosen}")
    return chosen


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
