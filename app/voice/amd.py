"""Answering-machine detection on an answered campaign call, before its reserved agent is rung.

Why here, in the call session, and not in the dialplan or the dialer: the verdict decides what
the session does next (dial the agent, hang up, or wait for the beep and speak), and the
session already owns the answered leg's socket; the dialer only learns the result on
``call.ended`` (app/campaigns/amd.py turns it into the attempt's outcome).

On the leg (fs-conf/autoload_configs/amd.conf.xml, avmd.conf.xml):
1. ``message`` mode only: ``avmd_start`` — mod_avmd listens for the voicemail beep from the
   answer on (the beep may come right after a short greeting) and reports it as the CUSTOM
   event ``avmd::beep``;
2. ``amd`` — mod_amd's blocking application; its verdict is in the completion's variables
   ``amd_result`` (HUMAN / MACHINE / NOTSURE) and ``amd_cause`` (e.g. MAXWORDS). Measured on
   the real switch over a PCMU SIP leg: HUMAN 1.49 s after the answer for "Hello?" then
   silence, MACHINE/MAXWORDS 1.83 s into a recorded greeting;
3. HUMAN or NOTSURE (or any verdict in ``connect`` mode): avmd stopped, the call goes on to the
   agent. MACHINE in ``hangup`` mode: the session hangs up. MACHINE in ``message`` mode: the
   beep is awaited until ``CAMPAIGN_AMD_BEEP_WAIT_SECONDS`` after the answer (measured: 4.9 s
   for a 4.5 s greeting), then its end (``detect_silence``: mod_avmd reports a beep 70-90 ms into
   it, and a voicemail records from the beep's end, so a message started at the report loses
   what plays over the rest of the beep — measured on the real switch: a message from 0.34 s
   before a 0.5 s beep ended), then the message verb plays and the session hangs up. A message
   that is an uploaded file (``{"audio": name}``) is looked up in the *call's* account folder
   at the verdict, before the wait: a file deleted since the campaign was saved (or a name no
   file of this account has) leaves no message — the machine is hung up at once and the report
   says ``messageError: audio_not_found``.

``Screening.report()`` is what ``call.ended`` (``amd``) and ``campaign.attempt`` carry.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import gevent.event

from app import limits
from app.campaigns.amd import (
    AUDIO_NOT_FOUND,
    CONNECT,
    CONNECTED,
    HANGUP,
    HANGUP_REASON,
    HUMAN,
    HUNG_UP,
    MACHINE,
    MESSAGE,
    MESSAGE_LEFT,
    NOTSURE,
    AmdSettings,
    audio_of,
)
from app.verbs import parse_verb_list, run_verbs
from app.voice.channel import ChannelVerbContext
from esl.errors import ChannelHungUp

log = logging.getLogger(__name__)

BEEP_EVENT = "avmd::beep"
# mod_amd's amd_result → our verdict; anything else (no variable: the app did not run) is NOTSURE
VERDICTS = {"HUMAN": HUMAN, "MACHINE": MACHINE, "NOTSURE": NOTSURE}


@dataclass
class Screening:
    """One call's detection, filled in as it happens (a machine may hang up mid-way: what was
    learnt until then is still reported). Times in ms from the answer."""

    mode: str
    result: Optional[str] = None
    cause: Optional[str] = None
    detection_ms: Optional[int] = None
    beep_ms: Optional[int] = None
    beep_hz: Optional[float] = None
    action: Optional[str] = None
    message_ms: Optional[int] = None
    message_error: Optional[str] = None

    @property
    def proceed(self) -> bool:
        """The call goes on to the agent."""
        return self.action == CONNECTED

    def report(self) -> dict[str, Any]:
        return {"mode": self.mode, "result": self.result, "cause": self.cause, "detectionMs": self.detection_ms,
                "beepMs": self.beep_ms, "beepHz": self.beep_hz, "action": self.action,
                "messageLeft": self.action == MESSAGE_LEFT and self.message_ms is not None,
                "messageMs": self.message_ms, "messageError": self.message_error}


def screen(ctx: ChannelVerbContext, settings: AmdSettings, screening: Screening,
           on_verdict: Callable[[Screening], None], clock: Callable[[], float] = time.monotonic) -> Screening:
    """Run the detection on the answered leg and act on a machine (hang-up or message); the
    caller dials the agent when ``screening.proceed``. ``on_verdict`` is told the verdict and
    what it leads to as soon as both are known — before the beep is awaited and the message
    plays — so the dialer knows at once whether this answer will need an agent.
    ChannelHungUp propagates (the customer or the machine hung up): ``screening`` keeps what
    was learnt."""
    answered = clock()
    beep: Optional[gevent.event.AsyncResult] = None
    if settings.mode == MESSAGE:
        beep = gevent.event.AsyncResult()
        ctx.on_event(BEEP_EVENT, lambda event: beep.set(event) if not beep.ready() else None)
        ctx.on_event("CHANNEL_HANGUP", lambda _event: beep.set(None) if not beep.ready() else None)
        ctx.execute("avmd_start")
    done = ctx.execute("amd")
    screening.detection_ms = _ms(clock() - answered)
    screening.result = VERDICTS.get((done.variable("amd_result") or "").upper(), NOTSURE)
    screening.cause = done.variable("amd_cause")
    log.info("call %s: amd %s/%s after %s ms", ctx.call_id, screening.result, screening.cause,
             screening.detection_ms)
    if screening.result != MACHINE or settings.mode == CONNECT:
        if beep is not None:
            ctx.execute("avmd_stop")
        screening.action = CONNECTED
        on_verdict(screening)
        return screening
    audio = audio_of(settings.message)
    recording = ctx.uploaded_audio(audio) if audio is not None else None
    if audio is not None and recording is None:
        log.warning("call %s: the campaign's message %r is no upload of account %s: no message left",
                    ctx.call_id, audio, ctx.account_id)
        screening.message_error = AUDIO_NOT_FOUND
    if settings.mode == HANGUP or screening.message_error:
        if beep is not None:
            ctx.execute("avmd_stop")
        screening.action = HUNG_UP
        on_verdict(screening)
        ctx.hangup("NORMAL_CLEARING", HANGUP_REASON)
        return screening
    screening.action = MESSAGE_LEFT
    on_verdict(screening)
    beep.wait(max(0.0, limits.CAMPAIGN_AMD_BEEP_WAIT_SECONDS - (clock() - answered)))
    heard = beep.value if beep.ready() else None  # None: no beep within the wait, or hung up
    if heard is None and ctx.conn.hung_up:
        raise ChannelHungUp(ctx.conn.hangup_event, "the machine hung up before its beep")
    if heard is not None:
        screening.beep_ms = _ms(clock() - answered)
        screening.beep_hz = _float(heard.get("Frequency"))
    ctx.execute("avmd_stop")
    if heard is not None:
        _await_the_beeps_end(ctx)
    started = clock()
    if recording is not None:
        ctx.execute("playback", recording)
    else:
        run_verbs(ctx, parse_verb_list([settings.message]))
    screening.message_ms = _ms(clock() - started)
    ctx.hangup("NORMAL_CLEARING", HANGUP_REASON)
    return screening


def _await_the_beeps_end(ctx: ChannelVerbContext) -> None:
    """Block until the machine's line is quiet after its beep (or the bounded wait is over):
    what plays before that, over the beep, is not on the voicemail."""
    done = ctx.execute("detect_silence", f"{limits.CAMPAIGN_AMD_BEEP_END_THRESHOLD} "
                       f"{limits.CAMPAIGN_AMD_BEEP_END_SILENT_FRAMES} "
                       f"{round(limits.CAMPAIGN_AMD_BEEP_END_WAIT_SECONDS * 1000)}")
    if done.variable("detect_silence_timeout") == "true":
        log.info("call %s: the line was not quiet within %s s of the beep; the message plays anyway",
                 ctx.call_id, limits.CAMPAIGN_AMD_BEEP_END_WAIT_SECONDS)


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _float(value: Optional[str]) -> Optional[float]:
    try:
        return round(float(value), 1) if value else None
    except ValueError:
        return None
