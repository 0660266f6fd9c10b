"""One inbound call, from FreeSWITCH's outbound-socket connect to the written call record.

The session owns the ESL conversation (plivoframework's model) and the call's lifecycle
(jambonz's): connect → number lookup → concurrency limiter → flow / webhook / app_json →
hang-up → call record, interaction summary, usage, ``call.ended`` and the status hook.
Everything FreeSWITCH tells us about the call arrives as events on this one socket
(``myevents``), so nothing here polls.
"""
from __future__ import annotations

import contextlib
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional

import gevent
import gevent.event
import redis

from app import limits
from app.calls import live_calls, sip_targets
from app.calls.hangup import ObservedHangup
from app.calls.interaction_times import utc_now
from app.calls.limiter import REFUSAL_HANGUP_CAUSE
from app.calls.originate import TRACE_ID_VARIABLE, OriginatedLeg
from app.calls.records import CallContext, WrittenRecord
from app.calls.route import CallRoute
from app.calls.route_snapshot import RouteUnavailable
from app.calls.status_hook import base_body, final_body, send_status
from app.campaigns.amd import AmdSettings
from app.contact import interactions
from app.events import payloads
from app.ops.metrics import CALLS_IN_PROGRESS, observe_call_setup
from app.settings import get_settings
from app.verbs import VerbList, VerbListRejected, parse_verb_list
from app.verbs.base import VerbsReplaced
from app.voice import amd
from app.voice.call_events import CallEvents
from app.voice.call_handlers import (
    HANDLER_WEBSOCKET,
    HandlerResult,
    digits,
    handler_kind,
    run_application,
    run_hooked_verbs,
)
from app.voice.channel import HookTarget
from app.voice.live_actions import LiveHandle
from app.voice.services import CallServices
from app.voice.session_context import SessionVerbContext
from app.webhooks.errors import Reason, WebhookFailed
from app.webhooks.first_request import first_request_body
from app.webhooks.ws_handler import WsCallHandler
from esl.errors import ChannelHungUp, ConnectionLost, EslError
from esl.outbound import OutboundConnection
from esl.protocol import Event

log = logging.getLogger(__name__)

UNKNOWN_NUMBER_CAUSE = "UNALLOCATED_NUMBER"        # SIP 404
UNKNOWN_ACCOUNT_CAUSE = "NORMAL_TEMPORARY_FAILURE"  # an originated leg whose account is gone
NO_APPLICATION_CAUSE = "SERVICE_UNAVAILABLE"       # SIP 503: number exists, nothing answers it
UNKNOWN_TRUNK_CAUSE = "CALL_REJECTED"              # SIP 403: not this account's carrier
SRTP_REQUIRED_CAUSE = "INCOMPATIBLE_DESTINATION"   # SIP 488: plain RTP from an SRTP-mandatory carrier
NO_DATABASE_CAUSE = "NORMAL_TEMPORARY_FAILURE"     # SIP 503: cannot route it now, fail over
LOST_SOCKET_CAUSE = "NORMAL_TEMPORARY_FAILURE"      # recorded when FreeSWITCH never said
# The sofia profile carriers reach (fs-conf/sip_profiles/external.xml): calls on it must come
# from a gateway of a platform carrier or of the dialled number's own account.
TRUNK_PROFILE = "external"
# verb-list endings that are call failures (webhook_error on the record and call.failed)
FAILED_OUTCOMES = frozenset({"queue_not_found", "user_not_found"})


@dataclass(frozen=True)
class IncomingCall:
    call_id: str
    trace_id: uuid.UUID
    from_number: str
    to_number: str
    source_ip: Optional[str]
    sofia_profile: Optional[str]
    answer_state: Optional[str]     # "ringing" when FreeSWITCH hands the call over unanswered
    originated: Optional[OriginatedLeg] = None  # set on legs the controller dialled
    # the sofia gateway whose registration the carrier called (sip_gateway_name / sip_gateway)
    sofia_gateway: Optional[str] = None
    srtp_offered: bool = False  # the offer carried SDES crypto (rtp_has_crypto)

    @classmethod
    def from_channel(cls, channel: Event) -> "IncomingCall":
        trace = channel.variable(TRACE_ID_VARIABLE)
        return cls(
            call_id=channel.get("Unique-ID") or "",
            trace_id=uuid.UUID(trace) if trace else uuid.uuid4(),
            from_number=digits(channel.get("Caller-Caller-ID-Number")),
            to_number=digits(channel.get("Caller-Destination-Number")),
            source_ip=channel.variable("sip_network_ip") or channel.get("Caller-Network-Addr"),
            sofia_profile=channel.variable("sofia_profile_name"),
            answer_state=channel.get("Answer-State"),
            originated=OriginatedLeg.from_variables(channel.variable),
            sofia_gateway=channel.variable("sip_gateway_name") or channel.variable("sip_gateway"),
            srtp_offered=bool(channel.variable("rtp_has_crypto")),
        )


class CallSession:
    def __init__(self, conn: OutboundConnection, services: CallServices) -> None:
        self.conn = conn
        self.services = services
        self.call: Optional[IncomingCall] = None
        self.record: Optional[CallContext] = None
        self.route: Optional[CallRoute] = None
        self._held_since: Optional[float] = None
        self._ws: Optional[WsCallHandler] = None
        self._events: Optional[CallEvents] = None
        self._status_update: Optional[gevent.Greenlet] = None  # the last status hook delivery
        self._connected_us = 0
        self._answered_us = 0
        self._live: Optional[LiveHandle] = None      # live control (app/voice/live_actions.py)
        self._runner: Optional[gevent.Greenlet] = None  # runs the verbs while they can be replaced
        self._screening: Optional[amd.Screening] = None  # a campaign call's machine detection

    # -- lifecycle ---------------------------------------------------------------------------
    def run(self) -> None:
        channel = self.conn.connect()
        self._connected_us = int(time.time() * 1_000_000)
        self.call = call = IncomingCall.from_channel(channel)
        # The lookup (PostgreSQL) overlaps the two ESL round trips instead of following them.
        lookup = gevent.spawn(_route_or_unavailable, self.services, call)
        guard = self.conn.begin_session()
        if guard is not None and not guard.startswith("+OK Deleted: 1"):
            log.warning("call %s: setup guard not cancelled (%s); the switch may refuse it",
                        call.call_id, guard)
        self.route = route = lookup.get()
        if isinstance(route, RouteUnavailable):
            self.route = None
            self._refuse_unroutable()
            return
        self._events = CallEvents(self.services.events, call.trace_id,
                                  route.account_id if route else None)
        if route is None:
            if call.originated is not None:
                log.warning("call %s: originated for account %s, which is gone", call.call_id,
                            call.originated.account_id)
                self._report_failure("unknown_account", UNKNOWN_ACCOUNT_CAUSE)
                self._hangup_and_exit(UNKNOWN_ACCOUNT_CAUSE)
                return
            log.info("call %s to unknown number %s refused", call.call_id, call.to_number)
            self._report_failure("unknown_number", UNKNOWN_NUMBER_CAUSE, 404)
            self._hangup_and_exit(UNKNOWN_NUMBER_CAUSE)
            return
        self.record = self._record_context(route, call)
        if route.direction == "inbound" and call.sofia_profile == TRUNK_PROFILE \
                and self.services.routing is not None and self.record.carrier_id is None:
            # FreeSWITCH's ACL is platform-wide; a tenant's private trunk must not reach
            # another tenant's numbers.
            self._refuse(UNKNOWN_TRUNK_CAUSE, 403, f"unknown_trunk:{call.source_ip}")
            return
        if route.direction == "inbound" and self.services.routing is not None and not call.srtp_offered \
                and self.services.routing.carrier_srtp(self.record.carrier_id) == "mandatory":
            self._refuse(SRTP_REQUIRED_CAUSE, 488, "srtp_required")
            return
        admission = self.services.limiter.acquire(
            call.call_id, route.account_id, route.account_limit,
            route.service_provider_id, route.service_provider_limit)
        if not admission.admitted:
            self._refuse(REFUSAL_HANGUP_CAUSE, 503, f"concurrency_limit:{admission.refused_scope}")
            return
        self.services.live_calls[call.call_id] = self.conn
        observe_call_setup(self._connected_us)
        in_progress = CALLS_IN_PROGRESS.labels(route.direction)
        in_progress.inc()
        try:
            self._drive()
        finally:
            in_progress.dec()
            self.services.limiter.release(call.call_id)
            self.services.live_calls.pop(call.call_id, None)
            self._live_end()
            # until its record is written, lost-call recovery must not record it too
            self.services.finishing.add(call.call_id)
            try:
                self._finish()
            finally:
                self.services.finishing.discard(call.call_id)

    def _drive(self) -> None:
        call, route, record = self.call, self.route, self.record
        app = route.application
        kind = handler_kind(app) if app else None
        self._emit("call.started", payloads.call_started(
            call.call_id, direction=route.direction, from_number=call.from_number,
            to_number=call.to_number, application_id=app.id if app else None,
            carrier_id=record.carrier_id, gateway_id=record.gateway_id,
            source_ip=call.source_ip, handler=kind))
        if call.answer_state == "ringing":
            self._emit("call.ringing", payloads.call_ringing(call.call_id, target=call.to_number))
        elif call.answer_state == "answered":  # a dialled leg: answered before it reached us
            self._on_answer(None)
        if kind is None:
            log.warning("call %s: number %s has no runnable application", call.call_id, call.to_number)
            record.webhook_error = "no_application"
            self._report_failure("no_application", NO_APPLICATION_CAUSE, 503)
            self.conn.hangup(NO_APPLICATION_CAUSE)
            return
        record.journey.append(kind)
        record.has_flow = kind == "flow"
        record.has_webhook = kind in ("webhook", HANDLER_WEBSOCKET)
        ctx = self._verb_context(app, kind)
        self._live_start(ctx)
        try:
            try:
                if route.amd is None or self._screen(ctx, route.amd):
                    result = self._run_with_redirects(ctx, app, kind)
                    self._note_result(result)
                if not self.conn.hung_up:
                    self.conn.hangup("NORMAL_CLEARING")
            except _Redirected:  # an API redirect that landed as the verbs ended: too late
                log.info("call %s: redirect arrived after the verbs ended; ignored", call.call_id)
                if not self.conn.hung_up:
                    self.conn.hangup("NORMAL_CLEARING")
        except ChannelHungUp:
            log.info("call %s: caller hung up", call.call_id)
        except ConnectionLost as exc:
            # FreeSWITCH dropped the socket: nothing left to hang up from here.
            log.warning("call %s: socket lost mid-call (%s)", call.call_id, exc)
            self._fail("connection_lost")
        except Exception:
            # A bug or a broken stored application: end the call rather than leave the caller
            # in dead air until FreeSWITCH gives up on the socket.
            log.exception("call %s: application crashed", call.call_id)
            self._fail("application_crashed")
            if not self.conn.hung_up:
                self.conn.hangup("NORMAL_TEMPORARY_FAILURE")
        finally:
            if self._screening is not None:
                record.amd = self._screening.report()
            record.journey.extend(ctx.journey)
            record.tags = dict(ctx.tags)
            record.hangup_reason = ctx.hangup_reason
            record.has_recording = "has_recording" in ctx.features or record.has_recording
            if ctx.dial_carrier is not None:
                record.dial_carrier_id, record.dial_gateway_id = ctx.dial_carrier
            if ctx.queue_id is not None:
                record.queue_id = ctx.queue_id
            if ctx.agent_id is not None:
                record.agent_id = uuid.UUID(ctx.agent_id)

    def _finish(self) -> None:
        """Record the call from FreeSWITCH's own variables, then let the socket go."""
        event = self._hangup_complete()
        if event is None and self.record is not None:
            event = self._observed_end()
        if self._ws is not None:
            self._ws.close()
        events_written = self._events.close()
        if self._held_since is not None and self.record is not None:  # hung up while held
            self.record.interaction.held_ms += int((time.monotonic() - self._held_since) * 1000)
            self._held_since = None
        if event is not None and self.record is not None:
            # written now, or held until PostgreSQL is back (app/calls/record_backlog.py);
            # held too while the call's events are not in the outbox: call.ended comes last
            self.services.records.write(event, self.record, self.call.call_id,
                                        then=self._final_status, hold=not events_written)
        self._exit()

    def _final_status(self, written: WrittenRecord) -> None:
        app = self.route.application if self.route else None
        if app is not None:
            send_status(app.call_status_hook_url, final_body(written, self.record),
                        secret=app.signing_secret, basic_auth=app.basic_auth,
                        client=self.services.webhooks, after=self._status_update)

    # -- refusals ----------------------------------------------------------------------------
    def _refuse(self, cause: str, sip_status: int, reason: str) -> None:
        """Turned away before answer (e.g. over maxConcurrentCalls: 503, so the carrier may
        fail over); recorded as ``refused`` on the dialled account."""
        log.info("call %s refused: %s", self.call.call_id, reason)
        self.record.refused = True
        self._report_failure(reason, cause, sip_status)
        self.conn.hangup(cause)
        self._finish()

    def _refuse_unroutable(self) -> None:
        """PostgreSQL is away and the number snapshot does not know the dialled number: a
        clean refusal (SIP 503, the carrier may fail over). No account is known, so there is
        no call record; ``call.failed`` is held by the event writer until the database is back."""
        call = self.call
        log.warning("call %s to %s refused: database unavailable and number not in the snapshot",
                    call.call_id, call.to_number)
        self._events = CallEvents(self.services.events, call.trace_id, None)
        self._report_failure("database_unavailable", NO_DATABASE_CAUSE, 503)
        self._hangup_and_exit(NO_DATABASE_CAUSE)

    def _hangup_and_exit(self, cause: str) -> None:
        self.conn.hangup(cause)
        self._hangup_complete()
        self._events.close()
        self._exit()

    # -- building blocks ---------------------------------------------------------------------
    def _record_context(self, route: CallRoute, call: IncomingCall) -> CallContext:
        carrier = None
        if call.originated is not None:  # we chose the carrier: the answered leg says which
            carrier = (call.originated.carrier_id, call.originated.gateway_id)
        elif self.services.routing is not None:  # our registration's carrier, else by address
            carrier = (self.services.routing.registered_carrier(call.sofia_gateway, route.account_id)
                       or self.services.routing.identify_carrier(call.source_ip, route.account_id))
        originated = call.originated
        return CallContext(
            account_id=route.account_id, trace_id=call.trace_id, direction=route.direction,
            service_provider_id=route.service_provider_id,
            application_id=route.application.id if route.application else None,
            from_number=call.from_number, to_number=call.to_number,
            carrier_id=carrier[0] if carrier else None, gateway_id=carrier[1] if carrier else None,
            agent_id=originated.agent_id if originated else None,
            queue_id=originated.queue_id if originated else None,
        )

    def _first_body(self) -> dict[str, Any]:
        """SPEC "Outbound webhook": the first request of a call. A leg the platform dialled is
        already answered when it reaches us: ``direction: outbound``, ``callStatus: in-progress``."""
        call, route = self.call, self.route
        return first_request_body(
            call_id=call.call_id, trace_id=str(call.trace_id), account_id=str(route.account_id),
            application_id=_s(route.application.id), from_number=call.from_number,
            to_number=call.to_number, direction=route.direction)

    def _verb_context(self, app, kind: str) -> SessionVerbContext:
        call, route, services = self.call, self.route, self.services
        base = {k: v for k, v in self._first_body().items() if k not in ("callStatus",)}
        hooks = None
        if kind == HANDLER_WEBSOCKET:
            self._ws = WsCallHandler(app.call_hook_url, call_sid=call.call_id,
                                     vendor=services.ws_vendor, basic_auth=app.basic_auth,
                                     **services.ws_options)
            hooks = HookTarget(client=_UntilHangupClient(self, _WsHookClient(self._ws)),
                               base_body=base)
        else:
            # also for flows and app_json: their gather actionHook / redirect URLs are posted
            # like a webhook's (POST, the application's signing secret and Basic auth)
            hooks = HookTarget(client=_UntilHangupClient(self, services.webhooks), base_body=base,
                               method=app.call_hook_method if app.call_hook_url else "POST",
                               secret=app.signing_secret, basic_auth=app.basic_auth)
        ctx = SessionVerbContext(
            conn=self.conn, trace_id=str(call.trace_id), account_id=str(route.account_id),
            application=app, from_number=call.from_number, to_number=call.to_number,
            redis=services.redis, recordings_dir=services.recordings_dir, hooks=hooks,
            router=lambda number: services.lcr_bridge(route.account_id, number),
            number_owner=lambda number: services.account_owns(route.account_id, number),
            sip_policy=lambda uri: sip_targets.refusal(route.account_id, uri),
            publisher=self._events.emit, answered=call.answer_state == "answered",
            contact=services.contact, interaction=self.record.interaction,
            music=services.music.source if services.music is not None else None,
            uploads=services.music.uploaded if services.music is not None else None,
            sip_profile=route.sip_profile,
        )
        self.conn.on("CHANNEL_ANSWER", ctx.mark_answered)
        self.conn.on("CHANNEL_ANSWER", self._on_answer)
        self.conn.on("CHANNEL_HOLD", self._on_hold)
        self.conn.on("CHANNEL_UNHOLD", self._on_unhold)
        return ctx

    def _screen(self, ctx: SessionVerbContext, settings: AmdSettings) -> bool:
        """A campaign call's answering-machine detection (app/voice/amd.py) before its agent is
        dialled: whether the call goes on to the agent (a machine is hung up or left a message)."""
        self._screening = amd.Screening(settings.mode)
        try:
            return amd.screen(ctx, settings, self._screening, on_verdict=self._on_verdict).proceed
        finally:
            if self._screening.result is not None:
                ctx.journey_note(f"amd:{self._screening.result}")

    def _on_verdict(self, screening: amd.Screening) -> None:
        self._emit("call.amd", payloads.call_amd(self.call.call_id, screening.report()))

    def _run_with_redirects(self, ctx: SessionVerbContext, app, kind: str) -> HandlerResult:
        """A WebSocket app may replace the running verbs at any moment (``command: redirect``)."""
        watcher = (gevent.spawn(self._watch_ws_commands, gevent.getcurrent())
                   if self._ws is not None else None)
        self._runner = gevent.getcurrent()
        try:
            try:
                return run_application(ctx, app, kind, self._first_body(), self._fetch_first)
            except _Redirected as redirect:
                verbs = redirect.ready()
            while True:
                try:
                    return run_hooked_verbs(ctx, app, verbs)
                except _Redirected as redirect:
                    verbs = redirect.ready()
        finally:
            self._runner = None  # from now on a live redirect is refused (call_ending)
            if self._live is not None:
                self._live.ending = True
            if watcher is not None:
                # block: a redirect arriving as the verbs finish must land here, not in _finish
                watcher.kill(block=True)

    # -- live control (POST /api/calls/:callId/actions) ----------------------------------------
    def _live_start(self, ctx: SessionVerbContext) -> None:
        """From now on the API can act on the call: its handle is in this process's table and
        its ``live-call`` key names this process. A Redis fault never touches the call: it
        just cannot be controlled from the API."""
        call = self.call
        self._live = live = LiveHandle(
            call_id=call.call_id, account_id=str(self.route.account_id), conn=self.conn, ctx=ctx,
            redirect=self._live_redirect, emit=self._emit, replace_verbs=self._live_replace,
            transferred=self._transferred)
        self.conn.on("CHANNEL_BRIDGE", live.on_bridge)
        self.conn.on("CHANNEL_UNBRIDGE", live.on_unbridge)
        self.conn.on("CHANNEL_EXECUTE_COMPLETE", live.on_execute_complete)
        self.services.live_sessions[call.call_id] = live
        try:
            live_calls.register(self.services.redis, get_settings().redis_key_prefix, call.call_id,
                                self.route.account_id, self.services.controller_id,
                                direction=self.route.direction, from_number=call.from_number,
                                to_number=call.to_number, answered=bool(self._answered_us))
        except redis.RedisError as exc:
            log.warning("call %s: not in the live-call registry (%s): no live control", call.call_id, exc)

    def _live_end(self) -> None:
        if self._live is None:
            return
        self._live.ending = True
        self.services.live_sessions.pop(self.call.call_id, None)
        try:
            live_calls.unregister(self.services.redis, get_settings().redis_key_prefix, self.call.call_id,
                                  self.route.account_id)
        except redis.RedisError:  # the key expires with its TTL
            log.warning("call %s: live-call key not removed", self.call.call_id)

    def _live_redirect(self, verbs: VerbList) -> bool:
        """Replace the rest of the running list with ``verbs`` (like the WebSocket command):
        stop the media now, then the verbs' greenlet continues with the new list."""
        runner = self._runner
        if runner is None or self.conn.hung_up:
            return False
        self._redirect(runner, verbs)
        return True

    def _live_replace(self, verbs: VerbList, after: gevent.event.Event) -> bool:
        """The verbs' greenlet continues with ``verbs`` once ``after`` is set (a transfer: the
        caller's bridge returned, the agent's leg being hung up), no media stopped. Why wait:
        the new verbs set ``hangup_after_bridge=true`` at once (``uuid_setvar``, a dial's or a
        queue's); landing before the old bridge returns, it hung the caller up instead."""
        runner = self._runner
        if runner is None or self.conn.hung_up:
            return False
        runner.kill(_Redirected(verbs, after), block=False)
        return True

    def _transferred(self, payload: dict[str, Any]) -> None:
        """A blind transfer (app/voice/live_actions.transfer) or a completed attended one
        (app/voice/consult_actions.consult_complete): the agent's window closes now
        (before the verbs' greenlet can run the target's verb and open the next one), then the
        journey, ``call.transferred`` and the status hook; the closed window is written last."""
        at = utc_now()
        closed = self.record.interaction.transfer(at)
        to = payload.get("to") or {}
        if self._live is not None:  # the journey shows it where it happened
            self._live.ctx.journey_note(f"transfer:{to.get('type')}")
        self._emit("call.transferred", payload)
        app = self.route.application
        if app is not None and app.call_status_hook_url:
            body = {**base_body(self.record, self.call.call_id, "in-progress"), "transfer": payload}
            self._status_update = send_status(
                app.call_status_hook_url, body, secret=app.signing_secret, basic_auth=app.basic_auth,
                client=self.services.webhooks, after=self._status_update)
        if closed is not None:
            segment_id, _started, talk_ms, hold_ms = closed
            interactions.close_transferred_segment(self.route.account_id, segment_id, at, talk_ms, hold_ms)

    def _redirect(self, runner: gevent.Greenlet, verbs: VerbList) -> None:
        """The runner is told first, then the media stopped: ``uuid_break`` waits for the switch's
        reply, and the broken application's completion could otherwise let the runner start
        the next verb of the old list before it learns of the redirect."""
        runner.kill(_Redirected(verbs), block=False)
        self.conn.api(f"uuid_break {self.call.call_id} all")

    def _watch_ws_commands(self, runner: gevent.Greenlet) -> None:
        for item in self._ws.commands:
            if item is None:  # the handler gave up reconnecting
                return
            if item["command"] == "hangup":
                self.conn.hangup("NORMAL_CLEARING")
            elif item["command"] == "redirect":
                try:
                    verbs = parse_verb_list(item.get("data"))
                except VerbListRejected as exc:
                    log.warning("call %s: redirect command rejected: %s", self.call.call_id, exc.errors)
                    continue
                self._redirect(runner, verbs)

    def _fetch_first(self, url: str, method: str, body: dict[str, Any]) -> Any:
        """The caller hears nothing until this returns: bounded by ``first_reply_deadline``
        (then the fallback or the apology plays, docs/webhooks.md)."""
        deadline = self.services.first_reply_deadline
        if self._ws is not None:
            def start() -> Any:
                late = WebhookFailed(Reason.TIMEOUT, 1, detail=f"no reply within {deadline}s")
                with gevent.Timeout(deadline, late):
                    return self._ws.start(body)
            return self._until_hangup(start)
        app = self.route.application
        return self._until_hangup(lambda: self.services.webhooks.fetch_instructions(
            url, method, body, secret=app.signing_secret, basic_auth=app.basic_auth,
            deadline_seconds=deadline))

    def _until_hangup(self, request: Callable[[], Any]) -> Any:
        """The customer's server may take 3 attempts of 10 s: a caller who hangs up meanwhile
        ends the call (and frees its slot) now, not when the server finally answers."""
        reply = gevent.event.AsyncResult()
        fetch = gevent.spawn(_settle, reply, request)
        ended = gevent.spawn(self._wait_ended)
        try:
            gevent.wait([reply, ended], count=1)
            if reply.ready():
                return reply.get()
            raise ChannelHungUp(self.conn.hangup_event, "hung up while waiting for the application")
        finally:
            fetch.kill(block=False)
            ended.kill(block=False)

    def _wait_ended(self) -> None:
        with contextlib.suppress(EslError):  # the socket is gone: the call is over all the same
            self.conn.wait_hangup_complete()

    def _note_result(self, result: HandlerResult) -> None:
        if result.error:  # the caller heard the apology or the fallback: a clean hang-up
            self.record.webhook_error = result.error
            self._report_failure(result.error, "NORMAL_CLEARING")
        elif result.outcome is not None and result.outcome.reason in FAILED_OUTCOMES:
            self.record.webhook_error = result.outcome.reason
            self._report_failure(result.outcome.reason, "NORMAL_CLEARING")

    def _fail(self, reason: str) -> None:
        self.record.webhook_error = reason
        self._report_failure(reason, "NORMAL_TEMPORARY_FAILURE")

    def _report_failure(self, reason: str, cause: str, sip_status: Optional[int] = None) -> None:
        """``call.failed``, one shape for every way a call fails (reasons: docs/events.md)."""
        self._emit("call.failed", payloads.call_failed(
            self.call.call_id, hangup_cause=cause, sip_status=sip_status, reason=reason))

    def _hangup_complete(self) -> Optional[Event]:
        try:
            return self.conn.wait_hangup_complete(timeout=self.services.hangup_complete_timeout)
        except EslError as exc:
            # FreeSWITCH vanished mid-call: the reconnecting inbound connection reconciles it.
            log.warning("call %s: no CHANNEL_HANGUP_COMPLETE (%s)", self.conn.uuid, exc)
            return self.conn.hangup_event

    def _observed_end(self) -> ObservedHangup:
        """The socket was lost before FreeSWITCH reported the hang-up: record what we saw,
        so the call is not missing from the records (``webhook_error`` says connection_lost)."""
        call = self.call
        return ObservedHangup(
            call_id=call.call_id, caller=call.from_number, callee=call.to_number,
            direction="inbound" if call.originated is None else "outbound",
            hangup_cause=LOST_SOCKET_CAUSE, started_us=self._connected_us,
            ended_us=int(time.time() * 1_000_000), answered_us=self._answered_us)

    def _exit(self) -> None:
        try:
            self.conn.exit(timeout=2.0)
        except EslError:
            self.conn.close()

    # -- channel events → bus ----------------------------------------------------------------
    def _emit(self, key: str, payload: dict[str, Any]) -> None:
        self._events.emit(key, payload)

    def _on_answer(self, _event: Optional[Event]) -> None:
        self._answered_us = int(time.time() * 1_000_000)
        self._emit("call.answered", payloads.call_answered(self.call.call_id))
        if self._live is not None:
            try:
                live_calls.mark_answered(self.services.redis, get_settings().redis_key_prefix, self.call.call_id)
            except redis.RedisError as exc:  # the live view shows it as ringing until the next read
                log.warning("call %s: answer not marked in the live-call registry (%s)", self.call.call_id, exc)
        app = self.route.application
        if app is not None and app.call_status_hook_url:
            self._status_update = send_status(
                app.call_status_hook_url, base_body(self.record, self.call.call_id, "in-progress"),
                secret=app.signing_secret, basic_auth=app.basic_auth, client=self.services.webhooks)

    def _on_hold(self, _event: Event) -> None:
        if self._held_since is None:  # counted once per window (interaction summary)
            self.record.interaction.holds += 1
        self._held_since = time.monotonic()
        self._emit("call.hold", payloads.call_hold(self.call.call_id))

    def _on_unhold(self, event: Event) -> None:
        held_ms = 0
        if self._held_since is not None:
            held_ms = int((time.monotonic() - self._held_since) * 1000)
            self._held_since = None
            self.record.interaction.held_ms += held_ms
        self._emit("call.resumed", payloads.call_resumed(self.call.call_id, held_ms=held_ms))


def _route_or_unavailable(services: CallServices, call: IncomingCall) -> "CallRoute | None | RouteUnavailable":
    """The lookup greenlet's result: RouteUnavailable is returned, not raised, so a database
    outage is not reported by the hub as a crashed greenlet for every call."""
    try:
        return services.route_for(call.originated, call.to_number)
    except RouteUnavailable as exc:
        return exc


def _s(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _settle(result: gevent.event.AsyncResult, request: Callable[[], Any]) -> None:
    try:
        result.set(request())
    except Exception as exc:  # handed to the waiting session, not reported by the hub
        result.set_exception(exc)


class _Redirected(VerbsReplaced):
    def __init__(self, verbs: list, after: Optional[gevent.event.Event] = None) -> None:
        super().__init__("redirected by the application")
        self.verbs = verbs
        self.after = after

    def ready(self) -> list:
        """The verbs, once what they wait for happened (a transfer's old bridge returned)."""
        if self.after is not None and not self.after.wait(limits.TRANSFER_BRIDGE_RETURN_SECONDS):
            log.warning("transfer: the caller's bridge did not return within %s s; the new verbs run anyway",
                        limits.TRANSFER_BRIDGE_RETURN_SECONDS)
        return self.verbs


class _UntilHangupClient:
    """Follow-up hooks (actionHook, redirect) stop waiting when the caller hangs up, too."""

    def __init__(self, session: CallSession, client: Any) -> None:
        self._session = session
        self._client = client

    def fetch_instructions(self, url: str, method: str, body: dict[str, Any], **auth: Any) -> Any:
        return self._session._until_hangup(
            lambda: self._client.fetch_instructions(url, method, body, **auth))


class _WsHookClient:
    """Lets follow-up hooks (actionHook, redirect) travel over the call's WebSocket."""

    def __init__(self, handler: WsCallHandler) -> None:
        self._handler = handler

    def fetch_instructions(self, url: str, method: str, body: dict[str, Any], **_auth: Any) -> Any:
        return self._handler.verb_hook(url, body)
