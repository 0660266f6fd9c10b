"""What the real switch does with a file string (prompts, holds), for the simulated apps.

Measured on FreeSWITCH 1.10.12 with the product's modules.conf.xml (issue 9, 15):
- a file scheme opens only when its module is loaded: without mod_tone_stream,
  ``silence_stream://`` is "Invalid file format" — playback answers FILE NOT FOUND at once,
  play_and_get_digits returns at once without collecting;
- ``say:<text>`` speaks with the channel's ``tts_engine``/``tts_voice``; without both the switch
  logs "Invalid Args" (switch_ivr_play_say.c) and plays nothing, and the app goes on;
- a prompt still wrapped in quotes (play_and_detect_speech does not unquote) is a file name
  with quotes: not found;
- ``silence_stream://-1`` never ends by itself.
"""
from __future__ import annotations

import math
from typing import Mapping, Optional

# file-string prefix -> the module whose file interface opens it
FILE_SCHEME_MODULES = {
    "silence_stream://": "mod_tone_stream",
    "tone_stream://": "mod_tone_stream",
    "http_cache://": "mod_http_cache",
    "local_stream://": "mod_local_stream",
}
SAY_PREFIX = "say:"
DETECT_MARK = "detect:"


def file_opens(path: str, loaded_modules: set[str]) -> bool:
    if path.startswith(("'", '"')):
        return False
    for prefix, module in FILE_SCHEME_MODULES.items():
        if path.startswith(prefix):
            return module in loaded_modules
    return bool(path)


def say_refused(path: str, channel_vars: Mapping[str, str]) -> bool:
    """A ``say:`` prompt without tts_engine and tts_voice on the channel: "Invalid Args"."""
    return path.startswith(SAY_PREFIX) and not (channel_vars.get("tts_engine")
                                                and channel_vars.get("tts_voice"))


def stream_seconds(path: str) -> Optional[float]:
    """Length of ``silence_stream://<ms>`` (``-1``: endless); None for anything else."""
    if not path.startswith("silence_stream://"):
        return None
    ms = path[len("silence_stream://"):].split(",", 1)[0]
    try:
        value = int(ms)
    except ValueError:
        return None
    return math.inf if value < 0 else value / 1000.0


def split_detect_speech(data: str) -> Optional[tuple[str, str]]:
    """play_and_detect_speech's data as mod_dptools reads it: (file, engine and grammar). The
    file is everything before the first ``detect:``, trailing spaces trimmed, quotes kept."""
    at = data.find(DETECT_MARK)
    if at < 0 or not data[at + len(DETECT_MARK):].strip():
        return None
    return data[:at].rstrip(), data[at + len(DETECT_MARK):]
