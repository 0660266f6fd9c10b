"""Hold music that plays on without a break for the whole of a queue wait.

Why (issue 27 item 4): the queue verb used to play the music in chunks of whole seconds
(``playback_timeout_sec``) so that it could look for an agent between them; every boundary cost
a CHANNEL_EXECUTE_COMPLETE, a claim and a new ``playback`` round trip, and the first chunk came
after the verb's bookkeeping. Measured on the real switch (FreeSWITCH 1.10.12, a trunk caller's
leg recorded): 0.38 s of silence between "Please hold." and the music, 0.24 s at each 2 s
boundary. Now one ``playback`` runs for the whole wait; the verb watches its completion with a
timeout (``poll_execute``) and does its round (claim an agent, refresh) while it plays. It is
stopped (``uuid_break``) only for an offer, an announcement or the end of the wait; after an
announcement it is sent the moment the speech completes (one ESL round trip). Queuing both at
once does not work: an app queued behind a running ``speak`` runs nested inside it at once
(cutting the speech), and with ``Event-Lock`` on the speak the switch started the queued music
only ~2.7 s after the speech (measured), when it next parsed the channel's queue.

A file (the shipped default, an uploaded file) ends: it is played again at once. A source that
ends almost at once (a missing stream or file) is not spun on: the rest of the round is slept.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Iterator, Optional

from app.verbs.context import VerbContext
from esl.errors import EslError

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event

log = logging.getLogger(__name__)

MUSIC_APP = "playback"
# playback paces its writes by this timer, not by the caller's packets (app/verbs/hold.py)
TIMER_VAR, TIMER = "timer_name", "soft"
# music that ended sooner than this after it was queued did not play (missing source)
RESTART_MIN_SECONDS = 1.0
# The music is not broken before it has been queued this long. Why: a timer-paced playback
# starts a FreeSWITCH service thread that sets its flag once running; a playback ended before
# that (an agent claimed at once, a break right after the start) leaves the thread looping for
# ever at 100 % of a core, holding the session, and the caller's channel never ends after its
# hang-up (FreeSWITCH 1.10.12, switch_core_service_thread: seen in CI, the spinning thread's
# CPU time dated it to the call's start). Costs at most this much to a caller offered at once.
MIN_PLAY_SECONDS = 0.2
# uuid_break stops the application playing now, and only that: a break that reaches the
# switch before the queued music has started is lost (switch_core_session_exec clears CF_BREAK
# as it starts an app; the park loop starts a queued app at its next 20 ms frame read), and one
# queued behind it (the music behind an announcement) starts and needs another break. So the
# break is sent again, soon at first (a stop right after a start: the queue verb offering an
# agent it claimed at once lost 0.5 s here, measured on FreeSWITCH 1.10.12), then further
# apart: the waits for the music's completion after each break, STOP_GIVE_UP_SECONDS in all.
STOP_FIRST_WAIT_SECONDS = 0.02
STOP_MAX_WAIT_SECONDS = 0.5
STOP_GIVE_UP_SECONDS = 5.0
_SLACK_SECONDS = 0.05


class HoldMusic:
    """The music of one queued caller: ``play_for`` holds the caller with it (starting it when
    it is not playing), ``stop`` ends it before anything else is played to the caller."""

    def __init__(self, ctx: VerbContext, source: str) -> None:
        self.ctx = ctx
        self.source = source
        self.app_uuid: Optional[str] = None
        self._queued_at = 0.0
        self._timer_set = False

    @property
    def playing(self) -> bool:
        return self.app_uuid is not None

    def start(self, *, after: Optional[tuple[str, str]] = None) -> None:
        """Start the music, right after ``after`` = (app, arg) (a position announcement) has
        run to its end when given."""
        self.stop()
        if not self._timer_set:
            self.ctx.set_var(TIMER_VAR, TIMER)
            self._timer_set = True
        if after is not None:
            self.ctx.execute(*after)
        self.app_uuid = self.ctx.execute_async(MUSIC_APP, self.source)
        self._queued_at = time.monotonic()

    def play_for(self, seconds: float) -> None:
        """Hold the caller for ``seconds`` with the music playing (it keeps playing after)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > _SLACK_SECONDS:
            if self.app_uuid is None:
                self.start()
            assert self.app_uuid is not None
            done = self.ctx.poll_execute(self.app_uuid, left)
            if done is None:
                return  # still playing: the round is over
            self.app_uuid = None
            if time.monotonic() - self._queued_at < RESTART_MIN_SECONDS:
                rest = deadline - time.monotonic()  # nothing to play: sleep, do not spin
                if rest > _SLACK_SECONDS:
                    self.ctx.execute("sleep", str(int(rest * 1000)))
                return
            # the file ended: the loop plays it again

    def stop(self) -> Optional["Event"]:
        """Stop the music (and an announcement queued before it); returns its completion.
        The timer goes with it (``_untime``)."""
        app_uuid, self.app_uuid = self.app_uuid, None
        if app_uuid is None:
            return None
        try:
            young = self._queued_at + MIN_PLAY_SECONDS - time.monotonic()
            if young > 0 and (done := self.ctx.poll_execute(app_uuid, young)) is not None:
                return done  # ended by itself meanwhile
            for wait in stop_waits():
                done = self.ctx.poll_execute(app_uuid, 0)  # ended by itself: no stray break
                if done is not None:
                    return done
                self.ctx.api(f"uuid_break {self.ctx.call_id}")
                done = self.ctx.poll_execute(app_uuid, wait)
                if done is not None:
                    return done
            return None
        finally:
            self._untime()

    def _untime(self) -> None:
        """Unset the timer once the music stopped, so that what the caller is played next (an
        agent's ``uuid_hold`` music, the hold of an attended transfer) is not timer-paced.
        Why: a timer-paced playback starts a FreeSWITCH service thread that reads the caller's
        audio; one that sets its flag after its playback ended spins for ever holding the
        session, and the caller's channel then never ends (FreeSWITCH 1.10.12: seen in CI and
        in tests/realswitch/test_agent_hangs_up_mid_consult.py, a gdb backtrace showed
        switch_core_service_thread looping while the session's destroy waited for its lock).
        The queue wait keeps its timer (its music starts before a caller sending 30 or 40 ms
        packets has had our end switched to them); a playback started later is paced right by
        the caller's packets, and the phases after the wait have no service thread at all."""
        if self._timer_set:
            self._timer_set = False
            try:
                self.ctx.set_var(TIMER_VAR, "")
            except EslError as exc:  # the caller is gone: nothing more is played to it
                log.info("call %s: timer not unset (%s)", self.ctx.call_id, exc)


def stop_waits() -> Iterator[float]:
    """How long to wait for the music's completion after each break: doubling from
    STOP_FIRST_WAIT_SECONDS to STOP_MAX_WAIT_SECONDS, STOP_GIVE_UP_SECONDS in all."""
    wait, total = STOP_FIRST_WAIT_SECONDS, 0.0
    while total < STOP_GIVE_UP_SECONDS:
        yield wait
        total += wait
        wait = min(wait * 2, STOP_MAX_WAIT_SECONDS)
