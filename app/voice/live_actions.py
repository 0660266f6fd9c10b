"""What each live-control action does to one call (``POST /api/calls/:callId/actions``).

One function per action in ``ACTIONS``, run by the controller process that drives the call
(app/voice/live_control.py delivers the request), on the call's own outbound socket, one
action of a call at a time. Each either returns (done: the API answers 200 with the call's
state) or raises :class:`Refused` (a 409 with its code). Parameters are checked again here:
the request crossed a process boundary.

FreeSWITCH 1.10 mapping (mod_commands; checked on the real switch, tests/realswitch/test_live_control.py):

| action   | command                                        | notes |
|----------|------------------------------------------------|-------|
| hangup   | ``sendmsg`` call-command hangup NORMAL_CLEARING | the reason goes to the record's ``hangup_reason`` |
| dtmf     | ``uuid_send_dtmf <callId> <digits>``            | RFC 2833 towards the caller (an IVR or PBX there) |
| mute     | ``uuid_audio <callId> start read mute -1``      | a media bug replaces what the switch reads from the caller with silence (divisor -1: zeros, not comfort noise): whoever is bridged or recorded hears nothing from the caller |
| unmute   | ``uuid_audio <callId> stop``                    | removes that bug |
| hold     | ``bgapi uuid_hold <other leg>``                 | the bridged party is held (re-INVITE sendonly) and the caller hears the hold music, as an agent's hold does |
| unhold   | ``bgapi uuid_hold off <other leg>``             | |
| redirect | ``uuid_break <callId> all``, then the new verbs | the session drops the rest of its list (app/voice/session.py) |
| record_start | ``uuid_setvar`` RECORD_STEREO / RECORD_PRE_BUFFER_FRAMES, ``uuid_record <callId> start <file>`` | stereo WAV named and reported as the record verb's (``media.recording.completed`` at RECORD_STOP) |
| record_stop | ``uuid_record <callId> stop <file>`` | |
| whisper | ``uuid_broadcast <leg> 'speak::<tts.speak_arg>' aleg``, or ``uuid_broadcast <leg> playback::http_cache://<url> aleg`` | said (or played) to one leg only: the caller, or the bridged party (``leg: bridged``); the other does not hear it. The URL passes the media URL guard first (refused: ``unsafe_url``, a 422 at the API) |
| transfer | ``uuid_setvar <callId> hangup_after_bridge false``, the new verbs, ``uuid_kill <agent leg>`` | a number or ``sip:`` target is checked first (a route, an owned callerId, a listed host: ``reachable_endpoint``), nothing touched if refused; a blind transfer of a caller talking to an agent (agent channel, or the REST API; app/calls/transfers.py): the agent's leg ends, the caller's bridge returns and the caller runs the target's verb instead of hanging up (the verb waits for that return: it sets ``hangup_after_bridge=true`` itself); no ``uuid_break``, which would leave CF_BREAK set and cut the new verbs' first playback |
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import gevent.event
import gevent.lock

from app import limits
from app.calls.sip_targets import InvalidSipUri, parse_sip_uri
from app.calls.transfers import InvalidTarget, NoQueueToReturnTo, TransferTarget, parse_target
from app.errors import SbcError
from app.events.payloads import call_transferred
from app.verbs import VerbList, VerbListRejected, parse_verb_list, tts
from app.verbs.dial import RECORDING_FORMAT
from app.verbs.fields import HTTPS_URL_PATTERN
from app.verbs.media_guard import MediaUrlRefused, check_media_url
from app.verbs.play import play_file
from app.verbs.recording import NO_PRE_BUFFER, PRE_BUFFER_VAR, recording_path, report_when_stopped
from esl.errors import EslError

log = logging.getLogger(__name__)

_DTMF = re.compile(r"[0-9A-Da-d*#]+\Z")
_REASON = re.compile(r"[A-Za-z0-9_.:-]+\Z")
_HTTPS_URL = re.compile(HTTPS_URL_PATTERN)
DEFAULT_HANGUP_REASON = "api"
# who asked (``userId``/``apiKeyId`` from the REST API, ``agentId`` from the agent channel):
# every action gets it, the ones that record it use it (a transfer's ``call.transferred``)
Requester = dict[str, Any]


class Refused(Exception):
    """The call cannot take the action now (409 ``code`` at the API; ``unsafe_url``, a media
    URL refused by the guard, is a 422 there like every refused URL)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class LiveHandle:
    """A live call as the actions see it: its socket, its verb context's few fields, and the
    session's redirect. Built by the session once its verbs can run."""
    call_id: str
    account_id: str
    conn: Any                                   # esl.outbound.OutboundConnection
    ctx: Any                                    # app.voice.session_context.SessionVerbContext
    redirect: Callable[[VerbList], bool]        # False when the verbs are already over
    emit: Callable[[str, dict[str, Any]], None]
    # the caller's verbs replaced without a uuid_break, run once the event is set (a transfer:
    # ``bridge_returned``), False when they are over
    replace_verbs: Callable[[VerbList, gevent.event.Event], bool] = lambda _verbs, _after: False
    # a transfer (blind, or an attended one completed) was done: the session's records, events
    # and status hook (``call.transferred``'s payload)
    transferred: Callable[[dict[str, Any]], None] = lambda _payload: None
    muted: bool = False
    held: bool = False
    ending: bool = False                        # its verbs are over / it is hanging up
    recording: Optional[str] = None             # the file of a recording started by record_start
    other_leg: Optional[str] = None             # the bridged party's channel, while bridged
    # the caller's ``bridge`` application returned (its CHANNEL_EXECUTE_COMPLETE: past the
    # switch's hangup_after_bridge check); cleared by each new bridge
    bridge_returned: gevent.event.Event = field(default_factory=gevent.event.Event, repr=False)
    lock: gevent.lock.Semaphore = field(default_factory=gevent.lock.Semaphore, repr=False)

    def on_bridge(self, event: Any) -> None:
        self.other_leg = event.get("Other-Leg-Unique-ID") or event.get("Bridge-B-Unique-ID") or None
        self.bridge_returned.clear()

    def on_execute_complete(self, event: Any) -> None:
        if event.get("Application") == "bridge":
            self.bridge_returned.set()

    def on_unbridge(self, _event: Any) -> None:
        self.other_leg = None
        self.held = False

    def state(self) -> dict[str, Any]:
        return {"answered": bool(self.ctx.answered), "muted": self.muted, "held": self.held,
                "bridged": self.other_leg is not None, "recording": self.recording is not None}


def ensure_alive(call: LiveHandle) -> None:
    """Refuse an action on a call that is already ending (shared with app/voice/consult_actions)."""
    if call.ending or call.conn.hung_up:
        raise Refused("call_ending", "The call is ending; it can no longer be changed.")


def _answered(call: LiveHandle, action: str) -> None:
    if not call.ctx.answered:
        raise Refused("call_not_answered", f"'{action}' needs an answered call; this one is not answered yet.")


def switch_api(call: LiveHandle, command: str) -> str:
    """One ``api`` command on the call's connection; a refusal becomes ``Refused``."""
    try:
        reply = call.conn.api(command)
    except EslError as exc:
        raise Refused("call_ending", f"The switch no longer has the call ({exc}).") from None
    if reply.startswith("-ERR") or reply.startswith("-USAGE"):
        log.info("call %s: live %s refused by the switch: %s", call.call_id, command.split()[0], reply.strip())
        raise Refused("call_ending", "The switch no longer has the call.")
    return reply


def hangup(call: LiveHandle, params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    reason = params.get("reason") or DEFAULT_HANGUP_REASON
    if not isinstance(reason, str) or len(reason) > limits.LIVE_CONTROL_HANGUP_REASON_MAX \
            or not _REASON.match(reason):
        raise ValueError("reason")
    ensure_alive(call)
    return hang_up_caller(call, reason)


def hang_up_caller(call: LiveHandle, reason: str) -> dict[str, Any]:
    """The caller's leg is hung up, the record's ``hangup_reason`` being ``reason``."""
    call.ending = True
    call.ctx.hangup_reason = reason
    try:
        call.conn.hangup("NORMAL_CLEARING")
    except EslError:
        pass  # the socket is gone: the call is over all the same
    return {"reason": reason}


def dtmf(call: LiveHandle, params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    digits = params.get("digits")
    if not isinstance(digits, str) or not _DTMF.match(digits) \
            or len(digits) > limits.AGENT_CHANNEL_DTMF_MAX_DIGITS:
        raise ValueError("digits")
    ensure_alive(call)
    _answered(call, "dtmf")
    switch_api(call, f"uuid_send_dtmf {call.call_id} {digits}")
    return {"digits": digits}


def mute(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    ensure_alive(call)
    _answered(call, "mute")
    if not call.muted:  # a second bug would stack; muting a muted call changes nothing
        switch_api(call, f"uuid_audio {call.call_id} start read mute -1")
        call.muted = True
    return {}


def unmute(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    ensure_alive(call)
    if call.muted:
        switch_api(call, f"uuid_audio {call.call_id} stop")
        call.muted = False
    return {}


def bridged_leg(call: LiveHandle, action: str) -> str:
    """The leg bridged to the caller, or ``Refused`` naming ``action``."""
    if call.other_leg is None:
        raise Refused("call_not_bridged", f"'{action}' needs a call bridged to another party "
                      "(dial, queue agent); this one is not.")
    return call.other_leg


def _hold(call: LiveHandle, held: bool) -> dict[str, Any]:
    ensure_alive(call)
    leg = bridged_leg(call, "hold" if held else "unhold")
    if call.held != held:
        # bgapi: uuid_hold waits for the other phone to answer its re-INVITE (seconds, or ~32 s
        # for a phone that never does) and an api would hold the call's socket that long
        try:
            reply = call.conn.send_command(f"bgapi uuid_hold {'' if held else 'off '}{leg}").reply_text
        except EslError as exc:
            raise Refused("call_ending", f"The switch no longer has the call ({exc}).") from None
        if not reply.startswith("+OK"):
            raise Refused("call_ending", "The switch refused the hold.")
        call.held = held
    return {"leg": leg}


def hold(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    return _hold(call, True)


def unhold(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    return _hold(call, False)


def redirect(call: LiveHandle, params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    verbs = redirect_verbs(params)
    ensure_alive(call)
    if not call.redirect(verbs):
        raise Refused("call_ending", "The call's verbs are over; it can no longer be redirected.")
    return {"verbs": len(verbs)}


def redirect_verbs(params: dict[str, Any]) -> VerbList:
    """``verbs`` (a verb list) or ``hookUrl`` (fetched by a ``redirect`` verb, like the verb
    does: the same URL rules, the same request body): exactly one of them."""
    verbs, hook = params.get("verbs"), params.get("hookUrl")
    if (verbs is None) == (hook is None):
        raise ValueError("exactly one of verbs, hookUrl")
    raw = verbs if verbs is not None else [{"verb": "redirect", "url": hook}]
    try:
        return parse_verb_list(raw)
    except VerbListRejected:
        raise ValueError("verbs") from None


def record_start(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    """Record the call from now on (both parties, caller left), as the record verb's files."""
    ensure_alive(call)
    _answered(call, "record_start")
    if call.recording is not None:
        raise Refused("already_recording", "The call is already being recorded from the API; stop it first.")
    ctx = call.ctx
    path = recording_path(ctx, RECORDING_FORMAT)
    switch_api(call, f"uuid_setvar {call.call_id} RECORD_STEREO true")
    switch_api(call, f"uuid_setvar {call.call_id} {PRE_BUFFER_VAR} {NO_PRE_BUFFER}")
    report_when_stopped(ctx, path, fmt=RECORDING_FORMAT, stereo=True)
    switch_api(call, f"uuid_record {call.call_id} start {path}")
    call.recording = path
    return {}


def record_stop(call: LiveHandle, _params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    ensure_alive(call)
    if call.recording is None:
        raise Refused("not_recording", "No recording started from the API runs on this call.")
    path, call.recording = call.recording, None
    switch_api(call, f"uuid_record {call.call_id} stop {path}")
    return {}


WHISPER_LEGS = ("caller", "bridged")


def whisper(call: LiveHandle, params: dict[str, Any], _by: Requester) -> dict[str, Any]:
    """Say ``text``, or play the audio at ``url``, to one leg only (``leg``: the caller,
    default, or the bridged party)."""
    text, url, leg = params.get("text"), params.get("url"), params.get("leg", "caller")
    if (text is None) == (url is None):
        raise ValueError("exactly one of text, url")
    if text is not None and (not isinstance(text, str) or not text.strip()
                             or len(text) > limits.LIVE_CONTROL_WHISPER_TEXT_MAX):
        raise ValueError("text")
    if url is not None and (not isinstance(url, str) or len(url) > limits.VERB_URL_MAX_LENGTH
                            or not _HTTPS_URL.match(url)):
        raise ValueError("url")
    if leg not in WHISPER_LEGS:
        raise ValueError("leg")
    ensure_alive(call)
    _answered(call, "whisper")
    target = call.call_id if leg == "caller" else bridged_leg(call, "whisper")
    if url is not None:
        # checked now, like every media URL the switch fetches for a customer (app/verbs/media_guard.py)
        try:
            check_media_url("whisper", url)
        except MediaUrlRefused as refused:
            raise Refused("unsafe_url", f"The audio URL is not allowed ({refused.label}).") from None
        # playback:: names the application, so a '::' inside the URL (an IPv6 host) stays in its argument
        switch_api(call, f"uuid_broadcast {target} playback::{play_file(url)} aleg")
        return {"leg": leg, "url": url}
    # one quoted argument (mod_commands splits on spaces, honouring single quotes): no quote in it
    speech = tts.speak_arg(tts.default_voice(call.ctx), text).replace("'", " ")
    switch_api(call, f"uuid_broadcast {target} 'speak::{speech}' aleg")
    return {"leg": leg}


def reachable_endpoint(ctx: Any, target: TransferTarget) -> str:
    """The dial string of a ``number`` or ``sip`` target (least-cost routing / the listed SIP
    host), or ``Refused`` before anything on the call is touched: the dial verb's own rules
    (``caller_id_not_owned``; a number no route reaches or a host the account does not list,
    ``transfer_target_not_found``), checked up front so the agent keeps its caller (the blind
    transfer here, the consultation in app/voice/consult_actions.py)."""
    if target.kind == "sip":
        try:
            uri = parse_sip_uri(target.value)
        except InvalidSipUri:
            raise ValueError("target") from None
        if ctx.sip_target_refusal(target.value):
            raise Refused("transfer_target_not_found", "The account does not list this SIP host.")
        return f"sofia/external/{uri.dial_string()}"
    if target.caller_id and not ctx.owns_number(target.caller_id):
        raise Refused("caller_id_not_owned", "The callerId is not a number of this account.")
    try:
        routed = ctx.lcr_bridge_string(target.value.lstrip("+"))
    except (SbcError, RuntimeError, ValueError):  # NoRoute, as the dial verb skips such a target
        routed = ""
    if not routed:
        raise Refused("transfer_target_not_found", "No route to this number.")
    return routed


def transfer(call: LiveHandle, params: dict[str, Any], by: Requester) -> dict[str, Any]:
    """A blind transfer of a caller talking to an agent (``params``: ``target``), asked by that
    agent (agent channel) or from the REST API (``by``: who). The caller leaves the agent for
    the target's verb (app/calls/transfers.py); the agent's leg is hung up."""
    try:
        target = parse_target(params.get("target"))
    except InvalidTarget:
        raise ValueError("target") from None
    ensure_alive(call)
    leg = bridged_leg(call, "transfer")
    ctx = call.ctx
    if ctx.agent_id is None:
        raise Refused("call_not_with_agent", "Only a call answered by an agent can be transferred.")
    if target.kind == "agent":
        if target.value == ctx.agent_id:
            raise Refused("transfer_to_self", "The call is already with this agent.")
        if ctx.contact is None or ctx.contact.candidate(ctx.account_id, target.value) is None:
            raise Refused("transfer_target_not_found",
                          "No agent of the account with SIP credentials has this id.")
    elif target.kind in ("number", "sip"):  # the dial verb would fail after the agent is gone
        reachable_endpoint(ctx, target)
    times = ctx.interaction
    try:
        verbs = parse_verb_list(target.verbs(queue=times.queue_name, priority=times.queue_priority))
    except NoQueueToReturnTo:
        raise Refused("transfer_needs_queue", "A transfer to an agent needs a call answered from a queue.") from None
    except VerbListRejected:
        raise ValueError("target") from None
    from_agent = ctx.agent_id
    switch_api(call, f"uuid_setvar {call.call_id} hangup_after_bridge false")
    if not call.replace_verbs(verbs, call.bridge_returned):
        raise Refused("call_ending", "The call's verbs are over; it can no longer be transferred.")
    call.transferred(call_transferred(call.call_id, kind="blind", from_agent=from_agent,
                                      to=target.as_dict(), by=by))
    try:  # the agent's leg ends: the caller's bridge returns and the new verbs run
        call.conn.api(f"uuid_kill {leg} NORMAL_CLEARING")
    except EslError as exc:
        log.warning("call %s: the transferring agent's leg not hung up (%s)", call.call_id, exc)
    return {"kind": "blind", "to": target.as_dict()}


ACTIONS: dict[str, Callable[[LiveHandle, dict[str, Any], Requester], dict[str, Any]]] = {
    "hangup": hangup,
    "dtmf": dtmf,
    "mute": mute,
    "unmute": unmute,
    "hold": hold,
    "unhold": unhold,
    "redirect": redirect,
    "record_start": record_start,
    "record_stop": record_stop,
    "whisper": whisper,
    "transfer": transfer,
}
