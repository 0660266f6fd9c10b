"""Answering-machine detection, the campaign's side: the setting, and what the detection's
report on ``call.ended`` makes of an attempt. The detection itself runs on the answered call
(app/voice/amd.py); docs/campaigns.md "Answering-machine detection" explains the modes and the
measured times.

A campaign's ``amd`` is one of ``AMD_MODES``:
- ``off``: no detection; every answer is a person (as before this setting existed);
- ``hangup``: a machine is hung up at once, outcome ``machine`` (its retry rule applies);
- ``message``: a machine is left ``amd_message`` after its beep, then hung up, outcome
  ``machine`` with ``messageLeft``. The message is a ``say`` or ``play`` verb, or
  ``{"audio": "<name>"}``: a file the account uploaded (``PUT /api/moh/:name``), looked up in
  the campaign's own account folder when it plays (app/voice/amd.py);
- ``connect``: detected and reported, but every answer goes to the agent.
HUMAN and NOTSURE always go to the agent: a person must never be hung up on for a guess.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from app.models.enums import AMD_MODES

OFF, HANGUP, MESSAGE, CONNECT = AMD_MODES
# what a machine may be left after its beep: a recording (play, an https URL checked when it
# is fetched, as every play) or text spoken by the TTS (say), each exactly as that verb plays it
MESSAGE_VERBS = ("say", "play")
# ... or a file of the account's uploaded audio: {"audio": "<name>"} (app/media/moh_uploads.py)
MESSAGE_AUDIO = "audio"
# the report's ``messageError`` when an uploaded message is gone (deleted since the campaign was
# saved): the machine is hung up at its verdict, no message left
AUDIO_NOT_FOUND = "audio_not_found"
# mod_amd's verdicts (its ``amd_result`` variable), lower-cased in our reports
HUMAN, MACHINE, NOTSURE = "human", "machine", "notsure"
# in reports: the detection ran, no verdict (the customer hung up first)
NO_VERDICT = "none"
# what the call did after the verdict (the report's ``action``)
CONNECTED, HUNG_UP, MESSAGE_LEFT = "connected", "hangup", "message"
# the call record's hangup_reason when the session ended a machine's call (hung up at the
# verdict, or after the message): what recovers the outcome of a call whose call.ended was lost
HANGUP_REASON = "answering_machine"


@dataclass(frozen=True)
class AmdSettings:
    """A campaign's detection as its answered call runs it; None stands for ``off``."""

    mode: str
    message: Optional[dict[str, Any]] = None  # message mode: the one say/play verb

    @classmethod
    def of(cls, mode: Optional[str], message: Optional[dict[str, Any]]) -> Optional["AmdSettings"]:
        if not mode or mode == OFF:
            return None
        return cls(mode, message if mode == MESSAGE else None)


def screens(mode: Optional[str]) -> bool:
    """Whether a campaign's answered calls go through the detection (any mode but ``off``)."""
    return AmdSettings.of(mode, None) is not None


def audio_of(message: Optional[Mapping[str, Any]]) -> Optional[str]:
    """The uploaded file's name when ``message`` is ``{"audio": name}``; None for a verb."""
    if isinstance(message, Mapping) and MESSAGE_AUDIO in message:
        name = message[MESSAGE_AUDIO]
        return name if isinstance(name, str) else None
    return None


def result_of(report: Optional[Mapping[str, Any]]) -> Optional[str]:
    """The verdict as reports show it (``call_records.amd_result``, the contact's
    ``last_amd_result``; models.enums.AMD_RESULTS): ``human``, ``machine`` or ``notsure``;
    ``none`` when the detection ran but the customer hung up before its verdict; None when no
    detection ran (``amd`` off, an unanswered call, an outcome recovered without its report)."""
    if not report:
        return None
    result = report.get("result")
    return result if result in (HUMAN, MACHINE, NOTSURE) else NO_VERDICT


def machine_not_connected(ended: Mapping[str, Any]) -> bool:
    """``call.ended`` of a call the detection ended on a machine (hung up, or a message left):
    the attempt's outcome is ``machine``, and the reserved agent never talked, so it owes no
    after-call work. Without the report (an outcome recovered from the call record, whose
    ``call.ended`` was lost) the session's hang-up reason says it."""
    report = ended.get("amd") or {}
    if report.get("result") == MACHINE and report.get("action") in (HUNG_UP, MESSAGE_LEFT):
        return True
    return ended.get("hangupReason") == HANGUP_REASON
