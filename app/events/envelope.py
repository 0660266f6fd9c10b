"""The JSON envelope every bus event travels in (docs/events.md).

Why an envelope: consumers de-duplicate on ``id`` (delivery is at-least-once), correlate on
``trace_id``, filter tenants on ``account``, and evolve with ``version`` — none of that belongs
in each payload.
"""
from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

ENVELOPE_VERSION = 1
CONTENT_TYPE = "application/json"

_service_name = os.environ.get("SBC_SERVICE_NAME", "saas-sbc")


def set_service_name(name: str) -> None:
    """Each process entry point names itself once (``controller``, ``api``, ``workers``)."""
    global _service_name
    _service_name = name


def service_name() -> str:
    return _service_name


def rfc3339(moment: datetime) -> str:
    """UTC with millisecond precision and a ``Z`` suffix, e.g. 2026-11-21T07:36:05.338Z."""
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _json_default(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return rfc3339(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable in an event payload")


@dataclass(frozen=True)
class Envelope:
    type: str                      # the routing key, e.g. call.ended
    payload: dict[str, Any]
    account: str | None = None     # account uuid, None for platform events
    trace_id: str | None = None
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    occurred_at: str = field(default_factory=lambda: rfc3339(datetime.now(timezone.utc)))
    source: str = field(default_factory=service_name)
    version: int = ENVELOPE_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "version": self.version,
            "occurred_at": self.occurred_at,
            "source": self.source,
            "account": self.account,
            "trace_id": self.trace_id,
            "payload": self.payload,
        }

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), default=_json_default, separators=(",", ":")).encode()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Envelope":
        missing = [k for k in ("id", "type", "occurred_at", "payload") if k not in data]
        if missing:
            raise ValueError(f"not an event envelope: missing {', '.join(missing)}")
        return cls(
            id=str(data["id"]), type=data["type"], payload=data["payload"],
            account=data.get("account"), trace_id=data.get("trace_id"),
            occurred_at=data["occurred_at"], source=data.get("source", ""),
            version=int(data.get("version", ENVELOPE_VERSION)),
        )

    @classmethod
    def from_json(cls, body: bytes | str) -> "Envelope":
        return cls.from_dict(json.loads(body))


def make_envelope(
    routing_key: str,
    payload: dict[str, Any],
    *,
    account_id: uuid.UUID | str | None = None,
    trace_id: uuid.UUID | str | None = None,
) -> Envelope:
    # Round-trip through JSON now so a payload that cannot be serialised fails at the caller,
    # not later inside the publisher greenlet.
    clean = json.loads(json.dumps(payload, default=_json_default))
    return Envelope(
        type=routing_key, payload=clean,
        account=str(account_id) if account_id is not None else None,
        trace_id=str(trace_id) if trace_id is not None else None,
    )
