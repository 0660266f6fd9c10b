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

from app.api.security import Identity
from app.calls import live_calls
from app.errors import Conflict, NotFound, ServiceUnavailable, ValidationFailed
from app.verbs import parse_verb_list


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
    try:
        live = live_calls.read(client, prefix, call_id)
    except redis.RedisError:
        raise CallControlUnavailable("Live calls cannot be read right now.") from None
    if live is None or live.account_id != str(me.account_id):
        raise NotFound("No such live call.", code="call_not_found")
    by = {"userId": str(me.user_id), "apiKeyId": str(me.api_key_id) if me.api_key_id else None}
    try:
        reply = live_calls.request(client, prefix, live, action, params, by=by)
    except live_calls.NoController:
        raise CallControlUnavailable("The controller driving this call is not reachable.") from None
    except live_calls.NoReply:
        raise CallControlUnavailable("The controller driving this call did not answer in time.") from None
    except redis.RedisError:
        raise CallControlUnavailable("The call's controller cannot be reached right now.") from None
    if reply.ok:
        return {"call_id": call_id, "action": action, "state": reply.state or {}}
    if reply.code == "call_not_found":
        raise NotFound("No such live call.", code="call_not_found")
    if reply.code == "invalid_action":
        raise ValidationFailed(reply.message or "Invalid action.", code="invalid_action")
    raise Conflict(reply.message or "The call cannot take this action now.",
                   code=reply.code or "call_state_conflict", details={"state": reply.state})
