"""/api/calls/:callId/actions — live call control (license ``programmable-voice``, admin
session; API keys need the scope ``call_control``: its own blueprint, so a key that may place
calls does not also get to hang up or redirect every live call)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.calls import live
from app.api.calls.schemas import LiveActionResultSchema, LiveActionSchema
from app.api.common import require_admin
from app.api.errors import ErrorSchema
from app.api.security import current_identity, require_license
from app.settings import get_settings

blp = Blueprint("call_control", __name__, url_prefix="/api/calls",
                description="Live call control: act on a call in progress")

# what the controller driving the call refuses (app/voice/live_actions.py, and ``conference``'s
# app/voice/three_way_actions.py): a 409 whose ``details.state`` is the call's state
CONFLICT_CODES = (
    "call_ending", "call_not_answered", "call_not_bridged", "already_recording", "not_recording",
    "call_not_with_agent", "transfer_to_self", "transfer_target_not_found", "caller_id_not_owned",
    "transfer_needs_queue", "not_consulting", "consult_not_answered")


@blp.route("/<uuid:call_id>/actions")
class CallActions(MethodView):
    @require_admin
    @require_license("programmable-voice")
    @blp.arguments(LiveActionSchema)
    @blp.response(200, LiveActionResultSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="call_not_found: unknown, ended, or another tenant's call")
    @blp.alt_response(409, schema=ErrorSchema, description="the call cannot take the action now: "
                      + ", ".join(CONFLICT_CODES) + " (details.state: the call's state)")
    @blp.alt_response(503, schema=ErrorSchema, description="call_control_unavailable: Redis unreachable, or the "
                      "controller driving the call gone or silent")
    def post(self, data: dict[str, Any], call_id: uuid.UUID):
        """One action on a call in progress (inbound or outbound), done by the controller that
        drives it before the answer: ``hangup`` (``reason`` → the record's ``hangup_reason``),
        ``dtmf`` (``digits`` to the caller), ``mute``/``unmute`` (what the caller says),
        ``hold``/``unhold`` (the bridged party; the caller hears hold music), ``redirect``
        (``verbs`` or ``hookUrl``: the rest of the current list is dropped), ``record_start``/
        ``record_stop``, ``whisper`` (``text`` to one ``leg``), ``transfer`` (blind, of a caller
        talking to an agent, to ``target``: an agent, a queue, a number or a listed ``sip:``
        URI; a number or ``sip:`` target the account cannot reach is refused before anything is
        touched), ``conference`` (the agent's consultation becomes a three-way call). 404
        ``call_not_found`` (unknown, ended, another tenant's); 409 ``call_ending`` /
        ``call_not_answered`` / ``call_not_bridged`` / ``already_recording`` / ``not_recording``
        / ``call_not_with_agent`` / ``transfer_to_self`` / ``transfer_target_not_found`` /
        ``caller_id_not_owned`` / ``transfer_needs_queue`` / ``not_consulting`` /
        ``consult_not_answered``; 422 ``validation_failed`` / ``invalid_action`` / ``unsafe_url``;
        503 ``call_control_unavailable``.
        Outcome event: ``call.control.applied``."""
        return live.act(live.control_redis(), get_settings().redis_key_prefix, current_identity(), call_id, data)
