"""/api/live: the console's live view. ``POST /tickets`` (token or API key, license
``queue-mgmt``, role admin or supervisor) issues a single-use stream ticket; ``GET /stream``
(the ticket, no token: an ``EventSource`` cannot send headers) is the server-sent events
stream of the ticket's account (app/api/live/streams.py)."""
from __future__ import annotations

from typing import Any

import redis
from flask import Response, current_app
from flask.views import MethodView
from flask_smorest import Blueprint

from app import limits
from app.accounts.login_throttle import throttle_client
from app.api.live import tickets
from app.api.live.schemas import StreamQuerySchema, TicketSchema
from app.api.live.streams import LiveRuntime
from app.api.security import current_identity, require_license
from app.api.tenancy import request_tenant
from app.errors import Forbidden
from app.settings import get_settings

STREAM_PATH = "/api/live/stream"
VIEWER_ROLES = frozenset({"admin", "supervisor"})
RUNTIME_EXTENSION = "live_view"
REDIS_EXTENSION = "sbc_live_tickets_redis"

blp = Blueprint("live", __name__, url_prefix="/api/live", description="Live view (wallboard)")


def is_stream_path(path: str) -> bool:
    """The stream authenticates with its ticket, not a header: the REST hook skips it."""
    return path == STREAM_PATH


def runtime() -> LiveRuntime:
    return current_app.extensions.setdefault(RUNTIME_EXTENSION, LiveRuntime())


def _redis() -> redis.Redis:
    client = current_app.extensions.get(REDIS_EXTENSION)
    if client is None:
        client = current_app.extensions[REDIS_EXTENSION] = throttle_client(get_settings().redis_url)
    return client


@blp.route("/tickets")
class Tickets(MethodView):
    @require_license("queue-mgmt")
    @blp.response(201, TicketSchema)
    def post(self) -> dict[str, Any]:
        """A single-use ticket for the live view's stream, good for 30 s.

        For administrators and supervisors: 403 ``supervisor_required`` for other roles."""
        me = current_identity()
        if me.role not in VIEWER_ROLES:
            raise Forbidden("Only a supervisor or an administrator can open the live view.",
                            code="supervisor_required", details={"roles": sorted(VIEWER_ROLES)})
        ticket = tickets.issue(_redis(), get_settings().redis_key_prefix, account_id=me.account_id,
                               user_id=me.user_id, subdomain=me.subdomain)
        return {"ticket": ticket, "expires_in_seconds": limits.LIVE_VIEW_TICKET_TTL_SECONDS,
                "stream_url": f"{STREAM_PATH}?ticket={ticket}"}


@blp.route("/stream")
class Stream(MethodView):
    @blp.doc(security=[], responses={"200": {
        "description": "text/event-stream: events snapshot, queue and call (docs/api.md \"Live view\")",
        "content": {"text/event-stream": {"schema": {"type": "string"}}}}})
    @blp.arguments(StreamQuerySchema, location="query")
    def get(self, query: dict[str, Any]) -> Response:
        """The ticket's account's wallboard, as server-sent events.

        401 ``invalid_ticket`` for a ticket that is unknown, used, expired or another tenant's."""
        held = tickets.redeem(_redis(), get_settings().redis_key_prefix, query["ticket"],
                              subdomain=request_tenant())
        hub = runtime().get()
        stream, first = hub.open(held.account_id)
        return Response(hub.body(stream, first), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
