"""Holding a call that a verb has handed over (record, listen) until the caller hangs up.

``park`` cannot do it: FreeSWITCH refuses to park a channel under socket control ("Cannot park
channels that are under control already", switch_ivr.c), so park returns at once and the call
ends. ``sleep`` holds, but a channel that only sleeps or parks sends no audio through a media
bug in ``mixed`` mode: uuid_audio_fork streamed 0 bytes. An endless silence playback
(``silence_stream://-1``, mod_tone_stream) holds the call under socket control and keeps
frames moving, so record_session and uuid_audio_fork get the caller's audio
(tests/realswitch/test_verbs_media.py measures both).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.verbs.context import VerbContext

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event

HOLD_APP = "playback"
HOLD_FILE = "silence_stream://-1"  # -1: no end; the playback returns on hang-up or uuid_break


def hold(ctx: VerbContext) -> "Event":
    """Play silence until the channel hangs up (ChannelHungUp) or the playback is broken."""
    return ctx.execute(HOLD_APP, HOLD_FILE)
