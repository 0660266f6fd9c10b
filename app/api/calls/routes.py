"""/api/calls — license ``programmable-voice``, admin session."""
from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Optional

import redis
from flask import current_app
from flask.views import MethodView
from flask_smorest import Blueprint

from app.accounts.login_throttle import throttle_client
from app.api.calls import service, supervise
from app.api.calls.schemas import (
    CallCreateSchema,
    CallQueuedSchema,
    CallStateSchema,
    SuperviseSchema,
    SupervisionSchema,
)
from app.api.common import require_admin
from app.api.security import current_identity, require_license, tenant_db
from app.calls import call_state
from app.errors import NotFound, ServiceUnavailable
from app.settings import get_settings

log = logging.getLogger(__name__)
REDIS_EXTENSION = "sbc_call_state_redis"  # one fast-failing Redis client per app


def _redis() -> redis.Redis:
    client = current_app.extensions.get(REDIS_EXTENSION)
    if client is None:
        client = current_app.extensions[REDIS_EXTENSION] = throttle_client(get_settings().redis_url)
    return client

blp = Blueprint("calls", __name__, url_prefix="/api/calls", description="Outbound calls")


@blp.route("")
class Calls(MethodView):
    @require_admin
    @require_license("programmable-voice")
    @blp.arguments(CallCreateSchema)
    @blp.response(202, CallQueuedSchema)
    def post(self, data: dict[str, Any]):
        """Dial ``to`` through least-cost routing as ``from``; when answered, ``applicationSid``
        drives the call like an inbound one (webhook ``direction: outbound``). The outcome
        arrives as events (``call.started``/``call.failed``/``call.ended``) and a call record."""
        me = current_identity()
        with tenant_db() as db:
            queued = service.place_call(db, me.account_id, data)
        try:  # after the commit: the state exists only for a request that will be dialled
            call_state.mark(_redis(), get_settings().redis_key_prefix, queued["call_id"],
                            me.account_id, call_state.QUEUED, queued_at=time.time())
        except redis.RedisError as exc:
            log.warning("call %s: live state not written (%s); GET shows it once recorded",
                        queued["call_id"], exc)
        return queued


@blp.route("/<uuid:call_id>")
class CallById(MethodView):
    @require_admin
    @require_license("programmable-voice")
    @blp.response(200, CallStateSchema)
    def get(self, call_id: uuid.UUID):
        """The state of a call placed here: queued, ringing, in-progress, then completed or
        failed with the reason (also the call record's ``hangup_reason``)."""
        live: Optional[call_state.LiveState]
        try:
            live = call_state.read(_redis(), get_settings().redis_key_prefix, call_id)
        except redis.RedisError:
            live = None
            unavailable = True
        else:
            unavailable = False
        with tenant_db() as db:
            try:
                return service.call_view(db, current_identity().account_id, call_id, live)
            except NotFound:
                if unavailable:
                    raise ServiceUnavailable("The call's live state cannot be read right now.",
                                             code="call_state_unavailable") from None
                raise


@blp.route("/<uuid:call_id>/supervise")
class CallSupervision(MethodView):
    """Supervisor listen / whisper / barge (license ``queue-mgmt``, role admin or supervisor):
    docs/api.md "Supervising an agent's call"."""

    @require_license("queue-mgmt")
    @blp.arguments(SuperviseSchema)
    @blp.response(202, SupervisionSchema)
    @blp.alt_response(200, schema=SupervisionSchema, description="Already supervising in this mode")
    def post(self, data: dict[str, Any], call_id: uuid.UUID):
        """Ring the supervisor's phone into the agent's live call (mode listen, whisper or
        barge); again with another mode while active: switch modes. 404 ``call_not_found``
        (unknown, ended or another tenant's), 409 ``no_agent_leg`` / ``supervisor_not_registered``
        / ``supervisor_on_another_switch`` / ``supervisor_has_no_phone`` / ``supervision_not_active``
        / ``cannot_supervise_own_call``. Outcome:
        ``call.control.start`` / ``call.control.stop``."""
        me = current_identity()
        supervise.require_supervisor(me)
        with tenant_db() as db:
            status, body = supervise.start(db, _redis(), get_settings().redis_key_prefix, me, call_id, data)
        return body, status

    @require_license("queue-mgmt")
    @blp.response(202)
    def delete(self, call_id: uuid.UUID):
        """Stop supervising the call: your leg is hung up (``call.control.stop`` reason ``stopped``)."""
        me = current_identity()
        with tenant_db() as db:
            supervise.stop(db, _redis(), get_settings().redis_key_prefix, me, call_id)
        return None
