"""Holding a call that a verb has handed over (record, listen) until the caller hangs up.

``park`` cannot do it: FreeSWITCH refuses to park a channel under socket control ("Cannot park
channels that are under control already", switch_ivr.c), so park returns at once and the call
ends. ``sleep`` holds, but a channel that only sleeps or parks sends no audio through a media
bug in ``mixed`` mode: uuid_audio_fork streamed 0 bytes. An endless silence playback
(``silence_stream://-1``, mod_tone_stream) holds the call under socket control and keeps
frames moving, so record_session and uuid_audio_fork get the caller's audio
(tests/realswitch/test_verbs_media.py measures both).

The playback is paced by a timer (channel variable ``timer_name=soft``), not by the caller's
packets. Without one, playback writes one frame of the packet size it started with each time it
reads a packet from the caller. A caller sending 30 or 40 ms packets without ``a=ptime`` makes
FreeSWITCH switch its end from 20 ms to theirs ~0.3 s into the call ("Asynchronous PTIME not
supported"), after the playback started at 20 ms: from then on it wrote 20 ms of silence per
30 (or 40) ms of caller audio, and the recording media bug, which takes equal parts of both
directions, kept 2/3 (or 1/2) of the call (issue 27, docs/media.md "Recording length").
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from app.verbs.context import VerbContext

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event

HOLD_APP = "playback"
# playback paces its writes by this timer, not by the caller's packets (module docstring)
HOLD_TIMER_VAR, HOLD_TIMER = "timer_name", "soft"
HOLD_FILE = "silence_stream://-1"  # -1: no end; the playback returns on hang-up or uuid_break


def hold(ctx: VerbContext) -> "Event":
    """Play silence until the channel hangs up (ChannelHungUp) or the playback is broken."""
    ctx.set_var(HOLD_TIMER_VAR, HOLD_TIMER)
    return ctx.execute(HOLD_APP, HOLD_FILE)
