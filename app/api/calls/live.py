"""``POST /api/calls/:callId/actions``: one live-control action on a call in progress.

The API cannot reach the switch; the controller process that drives the call can (its
session owns the call's socket and the verb list a redirect replaces). So: find the call in
the live-call registry (another tenant's call id, an unknown one and an ended one are all 404
``call_not_found``), send the action to that controller and wait for its answer
(app/calls/live_calls.py), which becomes 200 with the call's state or 409 with the reason.
"""
from __future__ import annotations

import uuid
from typing import Any

import redis
from flask import current_app

from app import limits
from app.api.security import Identity
from app.calls import live_calls
from app.errors import Conflict, NotFound, ServiceUnavailable, UnsafeUrl, ValidationFailed
from app.settings import get_settings
from app.verbs import parse_verb_list

REDIS_EXTENSION = "sbc_live_control_redis"
CONNECT_TIMEOUT_SECONDS = 1.0


class CallControlUnavailable(ServiceUnavailable):
    code = "call_control_unavailable"


def _params(data: dict[str, Any]) -> dict[str, Any]:
    params = {k: v for k, v in data.items() if k != "action"}
    if "verbs" in params:
        parse_verb_list(params["verbs"])  # 422 with per-verb errors, before the call is touched
    return params


def act(client: redis.Redis, prefix: str, me: Identity, call_id: uuid.UUID,
        data: dict[str, Any]) -> dict[str, Any]:
    action = data["action"]
    params = _params(data)
    by = {"userId": str(me.user_id), "apiKeyId": str(me.api_key_id) if me.api_key_id else None}
    state = send(client, prefix, str(me.account_id), call_id, action, params, by=by)
    return {"call_id": call_id, "action": action, "state": state}


def send(client: redis.Redis, prefix: str, account_id: str, call_id: uuid.UUID | str, action: str,
         params: dict[str, Any], *, by: dict[str, Any]) -> dict[str, Any]:
    """One action on the account's live call, through the controller that drives it (the REST
    actions and the agent channel's transfer): the call's state after it, or the typed error
    (404 ``call_not_found``, 422 ``invalid_action``, 409 with the controller's code, 503)."""
    try:
        live = live_calls.read(client, prefix, call_id)
    except redis.RedisError:
        raise CallControlUnavailable("Live calls cannot be read right now.") from None
    if live is None or live.account_id != account_id:
        raise NotFound("No such live call.", code="call_not_found")
    try:
        reply = live_calls.request(client, prefix, live, action, params, by=by)
    except live_calls.NoController:
        raise CallControlUnavailable("The controller driving this call is not reachable.") from None
    except live_calls.NoReply:
        raise CallControlUnavailable("The controller driving this call did not answer in time.") from None
    except redis.RedisError:
        raise CallControlUnavailable("The call's controller cannot be reached right now.") from None
    if reply.ok:
        return reply.state or {}
    if reply.code == "call_not_found":
        raise NotFound("No such live call.", code="call_not_found")
    if reply.code == "invalid_action":
        raise ValidationFailed(reply.message or "Invalid action.", code="invalid_action")
    if reply.code == "unsafe_url":  # a whisper's audio URL refused by the media URL guard
        raise UnsafeUrl(reply.message or "The URL is not allowed.")
    raise Conflict(reply.message or "The call cannot take this action now.",
                   code=reply.code or "call_state_conflict", details={"state": reply.state})


def control_redis() -> redis.Redis:
    """This app's client whose reads may block for the controller's answer (the wait, plus a
    margin)."""
    client = current_app.extensions.get(REDIS_EXTENSION)
    if client is None:
        client = current_app.extensions[REDIS_EXTENSION] = redis.Redis.from_url(
            get_settings().redis_url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
            socket_timeout=limits.LIVE_CONTROL_REPLY_SECONDS + 2)
    return client
