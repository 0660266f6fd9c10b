"""Live calls: which controller drives each call in progress, and the request/reply channel
the API uses to act on one (``POST /api/calls/:callId/actions``, docs/api.md "Controlling a
live call").

Why a registry of its own: ``call_state`` exists only for calls placed with ``POST
/api/calls`` and the agent-leg mark only while an agent is bridged; live control needs every
call a controller drives, inbound included, with its account (tenant isolation) and *which
controller process* holds its session (a redirect replaces the verbs that session runs, so
only that process can do it). The session writes ``<prefix>live-call:<callId>`` when the call
is admitted and deletes it when its verbs are over; the controller refreshes the TTL of its
calls' keys every ``limits.LIVE_CALL_REFRESH_SECONDS`` (like app/calls/siblings.py), so the
calls of a controller that died drop out within ``limits.LIVE_CALL_TTL_SECONDS``.

Why Redis pub/sub with a reply list, not the bus: the answer must say what happened (200, or
409 with the reason the call could not take the action), and the message must reach one
known process, now. The API publishes the request on the controller's channel
(``<prefix>live-control:<controllerId>``; ``PUBLISH`` returns 0 when no process listens: the
controller is gone) and waits up to ``limits.LIVE_CONTROL_REPLY_SECONDS`` on
``<prefix>live-control-reply:<requestId>``, which the controller ``LPUSH``es with a short TTL.
Nothing in a request is trusted by the controller: it validates it again (app/voice/live_control.py).
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Optional

import redis

from app import limits
from app.events.envelope import rfc3339
from app.redis_pool import as_text

# The actions, in the order docs/api.md lists them (app/voice/live_actions.py: one function each).
ACTIONS: tuple[str, ...] = ("hangup", "dtmf", "mute", "unmute", "hold", "unhold", "redirect",
                           "record_start", "record_stop", "whisper", "transfer", "conference")
REPLY_TTL_SECONDS = 30


def live_key(prefix: str, call_id: uuid.UUID | str) -> str:
    return f"{prefix}live-call:{call_id}"


def control_channel(prefix: str, controller_id: str) -> str:
    return f"{prefix}live-control:{controller_id}"


def reply_key(prefix: str, request_id: str) -> str:
    return f"{prefix}live-control-reply:{request_id}"


@dataclass(frozen=True)
class LiveCall:
    call_id: str
    account_id: str
    controller_id: str
    since: float


def account_calls_key(prefix: str, account_id: uuid.UUID | str) -> str:
    """The account's live calls (a sorted set scored by start time): what the live view lists
    when a page opens (app/api/live/board.py). A member whose ``live-call`` key has expired (its
    controller died) is dropped when the set is read."""
    return f"{prefix}live-calls:{account_id}"


def register(client: redis.Redis, prefix: str, call_id: str, account_id: uuid.UUID | str,
             controller_id: str, *, direction: Optional[str] = None, from_number: Optional[str] = None,
             to_number: Optional[str] = None, answered: bool = False) -> None:
    key = live_key(prefix, call_id)
    now = time.time()
    facts = {"direction": direction, "from": from_number, "to": to_number,
             "answered": f"{now:.3f}" if answered else None}
    pipe = client.pipeline(transaction=False)
    pipe.hset(key, mapping={"account": str(account_id), "controller": controller_id, "since": f"{now:.3f}",
                            **{k: v for k, v in facts.items() if v}})
    pipe.pexpire(key, int(limits.LIVE_CALL_TTL_SECONDS * 1000))
    pipe.zadd(account_calls_key(prefix, account_id), {call_id: now})
    pipe.execute()


# HSET only while the call's key exists: an answer reported after the call ended must not
# bring back a key that ``unregister`` removed.
_MARK_ANSWERED = "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HSET', KEYS[1], 'answered', ARGV[1]) end return 0"


def mark_answered(client: redis.Redis, prefix: str, call_id: str) -> None:
    client.eval(_MARK_ANSWERED, 1, live_key(prefix, call_id), f"{time.time():.3f}")


def unregister(client: redis.Redis, prefix: str, call_id: str, account_id: uuid.UUID | str) -> None:
    pipe = client.pipeline(transaction=False)
    pipe.delete(live_key(prefix, call_id))
    pipe.zrem(account_calls_key(prefix, account_id), call_id)
    pipe.execute()


def in_progress(client: redis.Redis, prefix: str, account_id: uuid.UUID | str,
                limit: int = limits.LIVE_VIEW_CALLS_LISTED) -> list[dict[str, Any]]:
    """The account's calls in progress, newest first, in the live view's ``call`` shape
    (docs/api.md "Live view"). Members whose key is gone are removed from the set here."""
    set_key = account_calls_key(prefix, account_id)
    members: list[bytes | str] = client.zrevrange(set_key, 0, limit - 1)  # type: ignore[assignment]
    ids = [as_text(m) for m in members]
    pipe = client.pipeline(transaction=False)
    for call_id in ids:
        pipe.hgetall(live_key(prefix, call_id))
    calls, gone = [], []
    for call_id, raw in zip(ids, pipe.execute()):
        v = {as_text(k): as_text(val) for k, val in raw.items()}
        if not v or v.get("account") != str(account_id):
            gone.append(call_id)
            continue
        since = rfc3339(datetime.fromtimestamp(float(v.get("since") or 0), timezone.utc))
        calls.append({"callId": call_id, "phase": "answered" if v.get("answered") else "started",
                      "direction": v.get("direction"), "from": v.get("from"), "to": v.get("to"),
                      "at": since, "since": since})
    if gone:
        client.zrem(set_key, *gone)
    return calls


def refresh(client: redis.Redis, prefix: str, call_ids: Iterable[str]) -> None:
    """Extend the TTL of this controller's live calls (a key already gone stays gone)."""
    pipe = client.pipeline(transaction=False)
    for call_id in call_ids:
        pipe.pexpire(live_key(prefix, call_id), int(limits.LIVE_CALL_TTL_SECONDS * 1000))
    pipe.execute()


def read(client: redis.Redis, prefix: str, call_id: uuid.UUID | str) -> Optional[LiveCall]:
    raw = client.hgetall(live_key(prefix, call_id))
    if not raw:
        return None
    v = {as_text(k): as_text(val) for k, val in raw.items()}
    return LiveCall(call_id=str(call_id), account_id=v.get("account", ""),
                    controller_id=v.get("controller", ""), since=float(v.get("since") or 0))


# -- one request and its reply ------------------------------------------------------------------
@dataclass(frozen=True)
class ControlReply:
    """What the controller answered: ``ok`` with the call's live ``state``, or a refusal
    (``code``/``message``: a 409 at the API, or 404 ``call_not_found`` for a call it no longer has)."""
    ok: bool
    code: Optional[str] = None
    message: Optional[str] = None
    state: Optional[dict[str, Any]] = None

    def as_json(self) -> str:
        return json.dumps({"ok": self.ok, "code": self.code, "message": self.message,
                           "state": self.state}, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> "ControlReply":
        data = json.loads(raw)
        return cls(ok=bool(data.get("ok")), code=data.get("code"), message=data.get("message"),
                   state=data.get("state"))


class NoController(Exception):
    """No process listens on the call's controller channel (it died; the key outlived it)."""


class NoReply(Exception):
    """The controller did not answer within the wait."""


def request(client: redis.Redis, prefix: str, live: LiveCall, action: str, params: dict[str, Any],
            *, by: Optional[dict[str, Any]] = None,
            timeout: float = limits.LIVE_CONTROL_REPLY_SECONDS) -> ControlReply:
    """Send one action to the controller that drives ``live`` and wait for its answer.
    ``client`` must allow a blocking read of ``timeout`` seconds (its socket timeout longer)."""
    request_id = uuid.uuid4().hex
    message = json.dumps({"id": request_id, "callId": live.call_id, "account": live.account_id,
                          "action": action, "params": params, "by": by, "sent": time.time()},
                         separators=(",", ":"))
    if not client.publish(control_channel(prefix, live.controller_id), message):
        raise NoController(live.controller_id)
    got = client.blpop([reply_key(prefix, request_id)], timeout=max(1, int(round(timeout))))
    if got is None:
        raise NoReply(request_id)
    return ControlReply.from_json(got[1])


def send_reply(client: redis.Redis, prefix: str, request_id: str, reply: ControlReply) -> None:
    key = reply_key(prefix, request_id)
    pipe = client.pipeline(transaction=False)
    pipe.lpush(key, reply.as_json())
    pipe.expire(key, REPLY_TTL_SECONDS)
    pipe.execute()
