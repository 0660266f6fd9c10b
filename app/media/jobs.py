"""A ``media.recording.completed`` event as a job, and the recording's stable id.

The id is derived (uuid5) from the account and the file path — unique per recording, since
the verbs put a random suffix in every file name — so every delivery of the same event, and
every worker that receives it, names the same ``recordings`` row.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from app.events.envelope import Envelope
from app.models.enums import RECORDING_FORMATS

RECORDING_NAMESPACE = uuid.UUID("0b5c7a52-3f4e-4f0e-9b55-5d1f1c3a7e10")


class BadJob(ValueError):
    """The event cannot describe a recording (missing/invalid field): never retried."""


def recording_id(account_id: uuid.UUID | str, path: str) -> uuid.UUID:
    return uuid.uuid5(RECORDING_NAMESPACE, f"{account_id}:{path}")


def recording_url(rec_id: uuid.UUID | str) -> str:
    """What the call record's and the CSV's Recording column carry (relative to the tenant's
    API host, like every other API path)."""
    return f"/api/recordings/{rec_id}"


def _uuid(payload: dict[str, Any], key: str, fallback: Any = None) -> uuid.UUID:
    value = payload.get(key) or fallback
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError):
        raise BadJob(f"{key} is not a uuid: {value!r}") from None


@dataclass(frozen=True)
class RecordingJob:
    id: uuid.UUID
    account_id: uuid.UUID
    call_id: uuid.UUID
    trace_id: uuid.UUID | None
    path: str
    format: str
    stereo: bool
    seconds: float | None
    completion_cause: str | None
    status_hook: str | None

    @classmethod
    def from_envelope(cls, envelope: Envelope) -> "RecordingJob":
        p = envelope.payload if isinstance(envelope.payload, dict) else {}
        account = _uuid(p, "accountSid", envelope.account)
        path = p.get("path")
        if not isinstance(path, str) or not path.startswith("/"):
            raise BadJob(f"path must be an absolute file path: {path!r}")
        fmt = p.get("format") or path.rsplit(".", 1)[-1]
        if fmt not in RECORDING_FORMATS:
            raise BadJob(f"format must be one of {RECORDING_FORMATS}: {fmt!r}")
        trace = p.get("traceId") or envelope.trace_id
        try:
            seconds = None if p.get("seconds") in (None, "") else float(p["seconds"])
        except (TypeError, ValueError):
            seconds = None  # FreeSWITCH's record_seconds is informative only; the file decides
        hook = p.get("statusHook")
        return cls(
            id=recording_id(account, path), account_id=account, call_id=_uuid(p, "callId"),
            trace_id=_uuid({"t": trace}, "t") if trace else None, path=path, format=fmt,
            stereo=bool(p.get("stereo", True)), seconds=seconds,
            completion_cause=(str(p["completionCause"])[:64] if p.get("completionCause") else None),
            status_hook=hook if isinstance(hook, str) and hook else None,
        )
