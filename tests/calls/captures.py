"""Real CHANNEL_HANGUP_COMPLETE events from the FreeSWITCH 1.10.12 wire captures."""
from __future__ import annotations

import uuid
from pathlib import Path

from esl.protocol import Event, iter_frames

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "esl_captures"


def hangup_events(scenario: str) -> list[Event]:
    data = (CAPTURES / scenario / "received.raw").read_bytes()
    return [f.event() for f in iter_frames(data)
            if f.content_type == "text/event-plain" and f.event().name == "CHANNEL_HANGUP_COMPLETE"]


def as_new_leg(event: Event, call_id: str | None = None) -> Event:
    """The same event with a fresh Unique-ID, so each test writes its own leg."""
    call_id = call_id or str(uuid.uuid4())
    return Event([(n, call_id if n in ("Unique-ID", "variable_uuid") else v) for n, v in event.headers],
                 event.body)
