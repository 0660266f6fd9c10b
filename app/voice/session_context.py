"""The verb context a live call session hands to verbs: the channel plus lazy answer.

Why lazy: a webhook that starts with ``dial`` or ``hangup`` must not answer the caller (the
bridge answers when the callee does; a rejection stays unanswered and unbilled), while every
media application needs an answered channel. So the first media application answers first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from app.events.payloads import interaction_step
from app.voice.channel import ChannelVerbContext

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event

# Applications that are meaningful on an unanswered channel. Not record_session: on a ringing
# channel it pre-answers (183) by itself, so the verbs that record answer first (record,
# conference) or let the bridge start it (dial: bridge_pre_execute_aleg_app).
NO_ANSWER_NEEDED = frozenset({
    "answer", "pre_answer", "ring_ready", "bridge", "set", "export", "unset", "multiset",
    "hangup", "respond",
})
# API commands that attach media to the channel (listen verb).
MEDIA_API_PREFIXES = ("uuid_audio_fork",)


@dataclass
class SessionVerbContext(ChannelVerbContext):
    answered: bool = False

    def mark_answered(self, _event: "Event | None" = None) -> None:
        """CHANNEL_ANSWER handler: a bridge may answer the caller without our ``answer``."""
        self.answered = True

    def ensure_answered(self) -> None:
        if not self.answered:
            self.conn.answer()
            self.answered = True

    def execute(self, app: str, arg: str = "", timeout: Optional[float] = None) -> "Event":
        if app not in NO_ANSWER_NEEDED:
            self.ensure_answered()
        return super().execute(app, arg, timeout)

    def execute_async(self, app: str, arg: str = "") -> str:
        if app not in NO_ANSWER_NEEDED:
            self.ensure_answered()
        return super().execute_async(app, arg)

    def api(self, cmd: str) -> str:
        if cmd.startswith(MEDIA_API_PREFIXES):
            self.ensure_answered()
        return super().api(cmd)

    def journey_step(self, step: str, details: Optional[dict[str, Any]] = None) -> None:
        """Each verb is one timeline entry, ``interaction.<verb>`` (docs/events.md)."""
        super().journey_step(step, details)
        self.publish(f"interaction.{step}", interaction_step(self.call_id, step=step, details=details))
