"""The live state of a call placed with ``POST /api/calls``, for ``GET /api/calls/:callId``.

Why Redis and not the outbox: the API role cannot read the outbox (it only writes it), and the
call record only exists once the call is over. So the live states are one small Redis hash per
call (``<prefix>call-state:<callId>``, expiring after ``limits.CALL_STATE_TTL_SECONDS``):

    queued       written by the API with the ``call.originate`` event
    ringing      the controller took the request and sent the first ``originate``
    in-progress  the callee answered (FreeSWITCH's ``+OK`` for the originate)

``completed`` and ``failed`` come from the call record (the authority once it exists): its
``status`` and ``hangup_reason``. The hash keeps the account id: another tenant's call id is
not found.

A request no controller takes within ``limits.ORIGINATE_DISPATCH_DEADLINE_SECONDS`` is failed
with ``no_freeswitch`` on both sides of the bus: ``state_view`` reports it so, and a controller
that receives it later refuses to dial it (``is_stale``) and writes that record — the answer
the API gave is never contradicted by a phone ringing afterwards.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Optional

import redis
from redis.typing import EncodableT

from app import limits
from app.redis_pool import as_text

QUEUED, RINGING, IN_PROGRESS, COMPLETED, FAILED = "queued", "ringing", "in-progress", "completed", "failed"
LIVE_STATES = (QUEUED, RINGING, IN_PROGRESS)
NO_FREESWITCH = "no_freeswitch"


def state_key(prefix: str, call_id: uuid.UUID | str) -> str:
    return f"{prefix}call-state:{call_id}"


def mark(client: redis.Redis, prefix: str, call_id: uuid.UUID | str, account_id: uuid.UUID | str,
         state: str, *, queued_at: Optional[float] = None) -> None:
    """Record a live state (a later state overwrites an earlier one; the record ends the story)."""
    if state not in LIVE_STATES:
        raise ValueError(f"not a live call state: {state!r}")
    fields: dict[EncodableT, EncodableT] = {"state": state, "account": str(account_id), "updated": f"{time.time():.3f}"}
    if queued_at is not None:
        fields["queued"] = f"{queued_at:.3f}"
    key = state_key(prefix, call_id)
    pipe = client.pipeline(transaction=False)
    pipe.hset(key, mapping=fields)
    pipe.expire(key, limits.CALL_STATE_TTL_SECONDS)
    pipe.execute()


@dataclass(frozen=True)
class LiveState:
    state: str
    account_id: str
    queued_at: Optional[float]
    updated_at: float


def read(client: redis.Redis, prefix: str, call_id: uuid.UUID | str) -> Optional[LiveState]:
    raw = client.hgetall(state_key(prefix, call_id))
    if not raw:
        return None
    values = {as_text(k): as_text(v) for k, v in raw.items()}
    return LiveState(state=values.get("state", QUEUED), account_id=values.get("account", ""),
                     queued_at=float(values["queued"]) if "queued" in values else None,
                     updated_at=float(values.get("updated", "0")))


def is_stale(queued_at: float, now: Optional[float] = None) -> bool:
    """True when a queued request waited past the dispatch deadline (never dialled then)."""
    return (now if now is not None else time.time()) - queued_at > limits.ORIGINATE_DISPATCH_DEADLINE_SECONDS


# Record status -> the reason reported when the record carries none of its own.
_STATUS_REASONS = {"busy": "busy", "no-answer": "no_answer", "refused": "refused",
                   "canceled": "canceled", "failed": "failed"}


def reason_from_record(status: str, hangup_reason: Optional[str], webhook_error: Optional[str]) -> Optional[str]:
    if status == COMPLETED:
        return hangup_reason
    return hangup_reason or webhook_error or _STATUS_REASONS.get(status, status)
