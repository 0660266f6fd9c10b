"""The controller's dialler: ``call.originate`` → ``bgapi originate`` through least-cost routing.

Why this shape:
- Each LCR leg (carrier gateway, in order) is one FreeSWITCH ``originate`` with the call's
  fixed id and the application ``'&socket(controller async full)'``: once the customer
  answers, the leg comes back to our outbound socket under that id and a normal call session
  drives it (records, events, verbs). A carrier fault tries the next leg, a callee refusal
  ends the walk — the rules FreeSWITCH applies to the ``dial`` verb's ``|`` chain
  (app.routing.causes); why the walk is ours and not ``|``: ``_dial``.
- ``bgapi`` (esl-captures/inbound_originate_bgapi): the ring time is spent in FreeSWITCH, not in
  a blocked ESL command; the BACKGROUND_JOB body says ``+OK <uuid>`` or ``-ERR <CAUSE>``.
- The concurrency slot is taken before dialling (a ringing leg counts, as an inbound call does
  from its first moment), refreshed while it rings, and handed to the session under the same
  call id; it is released here only when no session will ever own it.
- A leg that never reaches the socket (no answer, busy, no route, refused) still gets a call
  record (``direction: outbound``) and ``call.failed``, so data teams see every attempt.
"""
from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Callable, Optional

import gevent
import gevent.pool

from app.calls import call_state
from app.calls.hangup import ObservedHangup
from app.calls.limiter import REFUSAL_HANGUP_CAUSE
from app.calls.originate import InvalidOriginate, OriginatedLeg, OriginateRequest, record_callback_attempt
from app.calls.records import CallContext, write_call_record
from app.events import payloads, work_queues
from app.events.consumer import EventConsumer, SeenIds
from app.events.envelope import Envelope
from app.routing.causes import should_fail_over
from app.routing.dialer import NoRoute
from app.settings import get_settings
from app.verbs.dial import split_global_vars
from app.verbs.fsargs import quote_arg
from app.voice.call_events import CallEvents
from app.voice.services import CallServices
from esl.errors import EslError
from esl.inbound import InboundConnection

log = logging.getLogger(__name__)

# FreeSWITCH answers the job when the ring timeout ends; past this margin the switch is not
# answering at all and the attempt is failed here.
RESULT_MARGIN_SECONDS = 30.0
NO_ROUTE_CAUSE = "NO_ROUTE_DESTINATION"
NO_SWITCH_CAUSE = "NORMAL_TEMPORARY_FAILURE"
NO_APPLICATION_CAUSE = "SERVICE_UNAVAILABLE"
CALLER_ID_CAUSE = "CALL_REJECTED"
INVALID_DIAL_STRING_CAUSE = "INVALID_NUMBER_FORMAT"
# FreeSWITCH cause of a failed originate -> the reason GET /api/calls/:callId and the record's
# hangup_reason give (anything else: originate_failed)
CAUSE_REASONS = {"USER_BUSY": "busy", "NO_ANSWER": "no_answer", "NO_USER_RESPONSE": "no_answer",
                 "ALLOTTED_TIMEOUT": "no_answer", "CALL_REJECTED": "rejected"}
# Dials in flight per controller. A full pool stops the consumer taking more messages (they
# wait on the durable queue, for this or another controller) instead of growing memory.
MAX_DIALS_IN_FLIGHT = 2000
# Between two legs of a failover: how long to wait for the failed leg's uuid to be released.
UUID_RELEASE_WAIT_SECONDS = 2.0
UUID_RELEASE_POLL_SECONDS = 0.01


class _Failed(Exception):
    def __init__(self, reason: str, cause: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cause = cause


class Originator:
    def __init__(self, services: CallServices, nodes: Callable[[], list[InboundConnection]],
                 socket_address: Callable[[], tuple[str, int]]) -> None:
        self.services = services
        self.nodes = nodes
        self.socket_address = socket_address
        self.pending: set[str] = set()   # call ids ringing: their limiter slots need refreshing
        self._next_node = 0

    def handle(self, envelope: Envelope) -> None:
        """The ``call.originate`` consumer's handler."""
        try:
            request = OriginateRequest.from_envelope(envelope)
        except InvalidOriginate as exc:
            log.warning("call.originate %s ignored: %s %s", envelope.id, exc.message, exc.details)
            return
        self.originate(request, stale=_stale_api_request(request, envelope))

    def originate(self, request: OriginateRequest, *, stale: bool = False) -> bool:
        """Dial one leg; True when the customer answered (the session owns the call from there).
        ``stale``: a ``POST /api/calls`` request that waited past the dispatch deadline; the API
        already reports it failed (no_freeswitch), so it is recorded so and never dialled."""
        leg = OriginatedLeg(request.account_id, request.application_id, request.agent_id,
                            request.queue_id, campaign_id=request.campaign_id)
        route = self.services.find_originated(leg, request.phone_number)
        if route is None:
            log.warning("call.originate %s: account %s is gone", request.call_id, request.account_id)
            return False
        call_id = str(request.call_id)
        events = CallEvents(self.services.events, request.trace_id, request.account_id)
        ctx = CallContext(
            account_id=request.account_id, trace_id=request.trace_id, direction="outbound",
            service_provider_id=route.service_provider_id, application_id=request.application_id,
            from_number=request.caller_id, to_number=request.phone_number,
            agent_id=request.agent_id, queue_id=request.queue_id)
        started_us = _now_us()
        try:
            if stale:
                raise _Failed(call_state.NO_FREESWITCH, NO_SWITCH_CAUSE)
            if route.application is None:
                raise _Failed("no_application", NO_APPLICATION_CAUSE)
            if request.caller_id and not self.services.account_owns(request.account_id, request.caller_id):
                raise _Failed("caller_id_not_owned", CALLER_ID_CAUSE)
            admission = self.services.limiter.acquire(
                call_id, route.account_id, route.account_limit,
                route.service_provider_id, route.service_provider_limit)
            if not admission.admitted:
                ctx.refused = True
                raise _Failed(f"concurrency_limit:{admission.refused_scope}", REFUSAL_HANGUP_CAUSE)
            self.pending.add(call_id)
            try:
                self._dial(request, route.domain)
            except BaseException:
                self.services.limiter.release(call_id)
                raise
            finally:
                self.pending.discard(call_id)
        except _Failed as failed:
            log.info("call %s to %s not connected: %s (%s)", call_id, request.phone_number,
                     failed.reason, failed.cause)
            events.emit("call.failed", payloads.call_failed(call_id, hangup_cause=failed.cause,
                                                            reason=failed.reason))
            events.close()
            ctx.webhook_error = failed.reason
            ctx.hangup_reason = failed.reason
            write_call_record(ObservedHangup(
                call_id=call_id, caller=request.caller_id, callee=request.phone_number,
                direction="outbound", hangup_cause=failed.cause, started_us=started_us,
                ended_us=_now_us()), ctx)
            record_callback_attempt(request, reached=False)
            return False
        self._mark(request, call_state.IN_PROGRESS)
        record_callback_attempt(request, reached=True)
        return True

    def _mark(self, request: OriginateRequest, state: str) -> None:
        """The live state GET /api/calls/:callId shows; a Redis fault never stops a dial."""
        try:
            call_state.mark(self.services.redis, get_settings().redis_key_prefix, request.call_id,
                            request.account_id, state)
        except Exception as exc:  # redis.RedisError, or a broken client: the call goes on
            log.warning("call %s: live state %s not written: %s", request.call_id, state, exc)

    def _dial(self, request: OriginateRequest, domain: Optional[str] = None) -> None:
        """Raises _Failed with FreeSWITCH's cause unless a leg was answered.

        One ``originate`` per LCR leg, in order, each with the call's fixed id
        (``origination_uuid``): FreeSWITCH's own ``|`` failover re-applies ``{}`` variables to
        every leg and creates the next leg before the failed one is destroyed, so the second
        leg's uuid collides ("Duplicate UUID!", DESTINATION_OUT_OF_ORDER — issue 15). Walking
        the legs here keeps the id on whichever leg answers, with the switch's own rules: a
        callee refusal (``fail_on_single_reject`` causes, app.routing.causes) ends the walk,
        anything else tries the next carrier once the failed leg's uuid is released.
        """
        node = self._node()  # no switch is the first thing to say: nothing could be dialled
        try:
            lcr = self.services.lcr_bridge(request.account_id, request.phone_number, request.carrier_id)
        except NoRoute:
            raise _Failed("no_route", NO_ROUTE_CAUSE) from None
        self._mark(request, call_state.RINGING)
        lcr_globals, legs = split_global_vars(lcr)
        channel_variables = request.channel_variables()
        if domain and request.agent_id is not None:  # a callback: the agent's user/ dial
            channel_variables["domain_name"] = domain  # resolves in the account's directory domain
        variables = ",".join(f"{k}={v}" for k, v in channel_variables.items())
        if lcr_globals:
            variables += "," + lcr_globals
        application = socket_application(*self.socket_address())
        cause = ""
        for number, leg in enumerate(legs.split("|")):
            if number:
                self._wait_released(node, str(request.call_id))
            try:
                command = originate_command(f"{{{variables}}}{leg}", application)
            except ValueError:  # a stored row FreeSWITCH would misread: refuse, don't crash
                log.error("call %s: unusable dial string for leg %d: %r", request.call_id, number + 1, leg)
                raise _Failed("invalid_dial_string", INVALID_DIAL_STRING_CAUSE) from None
            body = self._originate(node, request, command)
            if body.startswith("+OK"):
                return
            cause = body[len("-ERR"):].strip() if body.startswith("-ERR") else ""
            if not cause or not should_fail_over(cause):
                break
            log.info("call %s: leg %d failed (%s); trying the next carrier", request.call_id,
                     number + 1, cause)
        raise _Failed(CAUSE_REASONS.get(cause, "originate_failed"), cause or NO_SWITCH_CAUSE)

    def _originate(self, node: InboundConnection, request: OriginateRequest, command: str) -> str:
        try:
            job = node.bgapi(command)
            return job.result(timeout=request.timeout_seconds + RESULT_MARGIN_SECONDS).strip()
        except EslError as exc:
            log.warning("call %s: originate on %s:%s failed: %s", request.call_id, node.host,
                        node.port, exc)
            raise _Failed("originate_failed", NO_SWITCH_CAUSE) from None

    @staticmethod
    def _wait_released(node: InboundConnection, call_id: str) -> None:
        """Until the failed leg's session is gone (``uuid_exists`` false; ~20 ms measured on
        FreeSWITCH 1.10.12). Past the bound the next leg is tried anyway: at worst it fails
        like the switch's own ``|`` would have."""
        deadline = time.monotonic() + UUID_RELEASE_WAIT_SECONDS
        while time.monotonic() < deadline:
            try:
                if node.api(f"uuid_exists {call_id}").strip() != "true":
                    return
            except EslError:
                return
            gevent.sleep(UUID_RELEASE_POLL_SECONDS)

    def _node(self) -> InboundConnection:
        """Round robin over the connected switches."""
        nodes = [node for node in self.nodes() if node.connected]
        if not nodes:
            raise _Failed("no_freeswitch", NO_SWITCH_CAUSE)
        self._next_node = (self._next_node + 1) % len(nodes)
        return nodes[self._next_node]


def socket_application(host: str, port: int) -> str:
    """The originate's application argument. mod_commands splits ``originate``'s argument on
    spaces before it reads ``&app(data)``, so unquoted ``&socket(h:p async full)`` arrives as
    ``socket`` with data ``h:p`` — no ``async``, no ``full`` (then ``linger`` is refused and the
    leg hangs up: issue 9). Single quotes group it (switch_separate_string removes them)."""
    return quote_arg(f"&socket({host}:{port} async full)")


def originate_command(dial_string: str, application: str) -> str:
    """``originate <dial string> <application>``. The dial string is one argument: nothing in
    it may split it (our variables are ids, digits and cause names)."""
    if any(ch.isspace() or ch == "'" for ch in dial_string):
        raise ValueError(f"dial string would split: {dial_string!r}")
    return f"originate {dial_string} {application}"


def _stale_api_request(request: OriginateRequest, envelope: Envelope) -> bool:
    """A ``POST /api/calls`` request (not a callback) queued longer than the dispatch deadline."""
    if request.application_id is None or request.callback_id is not None:
        return False
    try:
        queued_at = datetime.fromisoformat(envelope.occurred_at.replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        return False
    return call_state.is_stale(queued_at)


def _now_us() -> int:
    return int(time.time() * 1_000_000)


def start_originate_consumer(originator: Originator, seen: SeenIds, **consumer_kw) -> EventConsumer:
    """One durable queue shared by every controller: each ``call.originate`` is dialled once,
    by whichever controller takes it. A message is acknowledged when its dial starts, not when
    it ends: a controller dying mid-ring loses that attempt rather than ringing the customer
    twice (the callback's attempt count and the missing call record show it)."""
    pool = gevent.pool.Pool(MAX_DIALS_IN_FLIGHT)
    return EventConsumer.of_work_queue(work_queues.CALL_ORIGINATE, lambda env: pool.spawn(originator.handle, env),
                                       seen=seen, **consumer_kw).start()
