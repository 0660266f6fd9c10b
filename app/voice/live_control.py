"""The controller's side of live call control: listen on this process's channel, run each
request on the call's session, answer on the reply list (app/calls/live_calls.py has the
protocol and why).

One ``LiveControl`` per controller process. ``sessions`` (``CallServices.live_sessions``) maps
the calls this process drives to their :class:`LiveHandle`; sessions add and remove
themselves (and their ``live-call`` key). This task also refreshes those keys' TTL.
A request for a call not (or no longer) here answers ``call_not_found``; another account's
call id is answered the same way (the key said which account, the request must match it).
"""
from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable

import gevent
import gevent.event
import gevent.pool
import redis

from app import limits
from app.calls import live_calls
from app.calls.live_calls import ControlReply
from app.events.payloads import call_control_applied, requester
from app.voice.consult_actions import CONSULT_ACTIONS
from app.voice.live_actions import ACTIONS, LiveHandle, Refused, Requester
from app.voice.three_way_actions import THREE_WAY_ACTIONS
from esl.greenlet_task import GreenletTask

log = logging.getLogger(__name__)

MAX_ACTIONS_IN_FLIGHT = 200
RESUBSCRIBE_DELAY_SECONDS = 1.0
POLL_SECONDS = 1.0


class LiveControl(GreenletTask):
    def __init__(self, client: redis.Redis, prefix: str, controller_id: str,
                 sessions: dict[str, LiveHandle], *,
                 refresh_seconds: float = limits.LIVE_CALL_REFRESH_SECONDS) -> None:
        self.redis = client
        self.prefix = prefix
        self.controller_id = controller_id
        self.sessions = sessions
        self.refresh_seconds = refresh_seconds
        self.pool = gevent.pool.Pool(MAX_ACTIONS_IN_FLIGHT)
        self.subscribed = gevent.event.Event()
        self.done = 0

    # -- the loop ---------------------------------------------------------------------------
    def _run(self) -> None:
        refresher = gevent.spawn(self._refresh_loop)
        try:
            while True:
                try:
                    self._listen()
                except redis.RedisError as exc:
                    self.subscribed.clear()
                    log.warning("live control: channel lost (%s); resubscribing", exc)
                    gevent.sleep(RESUBSCRIBE_DELAY_SECONDS)
        finally:
            refresher.kill(block=False)

    def _listen(self) -> None:
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        try:
            pubsub.subscribe(live_calls.control_channel(self.prefix, self.controller_id))
            self.subscribed.set()
            while True:
                message = pubsub.get_message(timeout=POLL_SECONDS)
                if message is not None and message.get("type") == "message":
                    self.pool.spawn(self.handle, message["data"])
        finally:
            pubsub.close()

    def _refresh_loop(self) -> None:
        while True:
            gevent.sleep(self.refresh_seconds)
            try:
                if self.sessions:
                    live_calls.refresh(self.redis, self.prefix, list(self.sessions))
            except redis.RedisError as exc:  # the TTL covers a blip
                log.warning("live control: refreshing the live-call keys failed: %s", exc)

    # -- one request --------------------------------------------------------------------------
    def handle(self, raw: bytes | str) -> None:
        try:
            message = json.loads(raw)
            request_id = str(message["id"])
            if not request_id.isalnum() or len(request_id) > 64:
                raise ValueError("id")
        except (ValueError, KeyError, TypeError):
            log.warning("live control: malformed request ignored")
            return
        reply = self.run(message)
        try:
            live_calls.send_reply(self.redis, self.prefix, request_id, reply)
        except redis.RedisError as exc:
            log.warning("live control %s: reply not sent (%s)", request_id, exc)

    def run(self, message: dict[str, Any]) -> ControlReply:
        call = self.sessions.get(str(message.get("callId")))
        if call is None or call.account_id != str(message.get("account")):
            return ControlReply(ok=False, code="call_not_found", message="No such live call.")
        action = message.get("action")
        do: Callable[[LiveHandle, dict[str, Any], Requester], dict[str, Any]] | None = (
            ACTIONS.get(str(action)) or CONSULT_ACTIONS.get(str(action)) or THREE_WAY_ACTIONS.get(str(action)))
        params, by = message.get("params"), message.get("by")
        if do is None or not isinstance(params, dict):
            return ControlReply(ok=False, code="invalid_action", message="Unknown action.")
        with call.lock:  # one action of a call at a time, in arrival order
            try:
                details = do(call, params, requester(by))
            except Refused as refused:
                return ControlReply(ok=False, code=refused.code, message=refused.message,
                                    state=call.state())
            except ValueError as exc:
                return ControlReply(ok=False, code="invalid_action", message=f"Invalid {exc}.")
        self.done += 1
        lag_ms = None
        if isinstance(message.get("sent"), (int, float)):
            lag_ms = max(0, int((time.time() - message["sent"]) * 1000))
        log.info("call %s: live %s done (%s ms after the request)", call.call_id, action, lag_ms)
        call.emit("call.control.applied", call_control_applied(
            call.call_id, action=str(action), details=details, by=by))
        return ControlReply(ok=True, state=call.state())


def wait_subscribed(control: LiveControl, timeout: float = 5.0) -> bool:
    return control.subscribed.wait(timeout)
