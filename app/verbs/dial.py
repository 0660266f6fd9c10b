"""dial → ``bridge {call_timeout=..,leg_timeout=..,origination_caller_id_number=..}<leg>|<leg>|...``.

Targets are tried in order (``|`` is FreeSWITCH's sequential failover):
user → ``user/<sip user>@<account subdomain>``, only a user of the account's own directory
(app/contact/directory.py: an agent with SIP credentials; else skipped, ``user_not_found``
when nothing is left to dial); phone → the least-cost-routing bridge string (itself a
``|`` chain of gateways); sip → ``sofia/external/<uri>``, only to hosts the account lists and
the address policy admits (else skipped with the reason); queue → the queue verb. A queue
target ends the list like the ``queue`` verb: the targets before it are bridged first (with
failover) and, when none answers, the caller waits in that queue; targets after it could never
run, so validation refuses them (QUEUE_TARGET_NOT_LAST).

Before the bridge: ``set continue_on_fail=true`` (a failed bridge would otherwise hang up the
caller before we can record why — capture outbound_bridge_fail_continue) and
``set hangup_after_bridge=true``; with ``record``: ``RECORD_STEREO=true`` and
``bridge_pre_execute_aleg_app=record_session`` / ``bridge_pre_execute_aleg_data=<file>``:
FreeSWITCH starts the recording on the caller's leg once the callee answered and the legs are
bridged. record_session run before the bridge would pre-answer the ringing caller (183, seen on
the real switch); this way a dial that fails records nothing and answers nothing.
``media.recording.completed`` comes from app/verbs/recording.py like the record verb's.
A callerId the account does not own is refused at execution: no bridge,
``interaction.dial.rejected`` is published and the list ends.

When a phone target's carrier answered, the call record (and ``call.ended``) name that carrier
and gateway (``dial_carrier_id``/``dial_gateway_id``): the routed legs export them to the
caller's leg together with this dial's ``sbc_dial_id`` (app.routing.lcr.answering_carrier).
"""
from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any, Optional

from marshmallow import ValidationError, fields, validate, validates_schema

from app import limits
from app.calls.sip_targets import (
    INVALID_URI,
    PHONE_PATTERN,
    SIP_PATTERN,
    USER_PATTERN,
    InvalidSipUri,
    parse_sip_uri,
)
from app.errors import SbcError
from app.routing.lcr import DIAL_ID_VARIABLE, answering_carrier
from app.verbs.base import PartSchema, Verb, VerbOutcome, VerbSchema
from app.verbs.context import VerbContext
from app.verbs.fields import StrictBoolean, StrictInteger, Text
from app.verbs.queue import QUEUE_NAME_PATTERN, Queue
from app.verbs.recording import prepare_recording, recording_path, report_when_stopped

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event

log = logging.getLogger(__name__)

RECORDING_FORMAT = "wav"  # both legs, stereo: caller left, callee right
USER_NOT_FOUND = "user_not_found"  # a user target that is not in the account's directory
TARGET_PATTERNS = {
    "user": (USER_PATTERN, "A user name: letters, digits, '_', '.', '+', '-'."),
    "phone": (PHONE_PATTERN, "A phone number: 3-20 digits, optional leading +."),
    "sip": (SIP_PATTERN, "A SIP URI like sip:alice@example.com[:port][;transport=udp|tcp|tls]."),
    "queue": (QUEUE_NAME_PATTERN, "A queue name: 1-64 letters, digits, spaces, '_', '.', '-'."),
}
# A queue target ends the list (the caller waits there until answered or the wait runs out):
# a target after it would never be tried.
QUEUE_TARGET_NOT_LAST = ("A queue target must be the last target: the caller waits in the queue, "
                         "so targets after it would never be tried.")
_A_QUEUE = {"properties": {"type": {"const": "queue"}}, "required": ["type"]}


class TargetSchema(PartSchema):
    type = Text(required=True, validate=validate.OneOf(tuple(TARGET_PATTERNS)))
    name = Text(required=True, min_length=1, max_length=256)

    json_schema_extra = {
        "allOf": [
            {"if": {"properties": {"type": {"const": kind}}},
             "then": {"properties": {"name": {"pattern": pattern}}}}
            for kind, (pattern, _) in TARGET_PATTERNS.items()
        ]
    }

    @validates_schema
    def _name_fits_type(self, data: dict, **_: object) -> None:
        import re

        kind, name = data.get("type"), data.get("name")
        if kind == "sip" and isinstance(name, str):  # the parser says which part is refused
            try:
                parse_sip_uri(name)
            except InvalidSipUri as exc:
                raise ValidationError(str(exc), "name") from None
        if kind in TARGET_PATTERNS and isinstance(name, str):
            pattern, message = TARGET_PATTERNS[kind]
            if not re.fullmatch(pattern, name):  # re.match would let "...$" accept a trailing newline
                raise ValidationError(message, "name")


class DialSchema(VerbSchema):
    target = fields.List(fields.Nested(TargetSchema), required=True,
                         validate=validate.Length(min=1, max=limits.DIAL_MAX_TARGETS))
    timeout = StrictInteger(load_default=limits.DIAL_DEFAULT_RING_TIMEOUT_SECONDS,
                            validate=validate.Range(min=1, max=limits.DIAL_MAX_RING_TIMEOUT_SECONDS))
    callerId = Text(pattern=PHONE_PATTERN, pattern_message="A phone number: 3-20 digits, optional leading +.")
    record = StrictBoolean(load_default=False)

    # no queue target before the last: for each position k, "item k is a queue and item k+1
    # exists" must not hold (JSON Schema has no "index of" keyword)
    json_schema_extra = {
        "properties": {"target": {"not": {"anyOf": [
            {"minItems": k + 2, "prefixItems": [{}] * k + [_A_QUEUE]}
            for k in range(limits.DIAL_MAX_TARGETS - 1)
        ]}}},
    }

    @validates_schema
    def _queue_last(self, data: dict, **_: object) -> None:
        targets = data.get("target") or []
        if any(t.get("type") == "queue" for t in targets[:-1]):
            raise ValidationError(QUEUE_TARGET_NOT_LAST, "target")


def _record_answering_carrier(ctx: VerbContext, event: "Event", dial_id: str) -> None:
    answered = answering_carrier(event.variable, dial_id)
    if answered is not None:
        ctx.record_dial_carrier(*answered)


def _answering_user(event: "Event", users: dict) -> Optional[Any]:
    """The directory user whose phone answered: the other leg is ``sofia/<profile>/<sip user>@…``
    (the directory's dial-string resolves the registered contact)."""
    name = event.get("Other-Leg-Channel-Name") or ""
    parts = name.split("/", 2)
    user = parts[2].split("@", 1)[0] if len(parts) == 3 else ""
    return users.get(user)


def split_global_vars(dial_string: str) -> tuple[str, str]:
    """``{a=1,b=2}rest`` → (``a=1,b=2``, ``rest``); no leading block → ("", dial_string)."""
    if not dial_string.startswith("{"):
        return "", dial_string
    end = dial_string.find("}")
    if end < 0:
        return "", dial_string
    return dial_string[1:end], dial_string[end + 1:]


class Dial(Verb):
    name = "dial"
    schema_class = DialSchema
    ends_list = True

    def leg(self, ctx: VerbContext, target: dict, users: Optional[dict] = None) -> str:
        """``users`` collects the directory entries of the user targets (sip user → entry)."""
        kind, name = target["type"], target["name"]
        if kind == "user":  # the account's directory only: never ${domain_name}, never another tenant's
            entry = ctx.contact.directory_user(ctx.account_id, name) if ctx.contact is not None else None
            if entry is None:
                raise ValueError(USER_NOT_FOUND)
            if users is not None:
                users[entry.username] = entry
            return f"user/{entry.username}@{entry.domain}"
        if kind == "sip":  # refused unless the account lists the host (app.calls.sip_targets)
            try:  # parsed again: a list saved before the grammar narrowed is not trusted
                uri = parse_sip_uri(name)
            except InvalidSipUri:
                raise ValueError(INVALID_URI) from None
            refused = ctx.sip_target_refusal(name)
            if refused:
                raise ValueError(refused)
            profile = getattr(ctx, "sip_profile", "external")  # internal: an agent's sofia/internal/ contact
            return f"sofia/{profile}/{uri.dial_string()}"  # the checked parts, never the text
        return ctx.lcr_bridge_string(name.lstrip("+"))

    def bridge_arg(self, ctx: VerbContext, dial_id: str = "",
                   users: Optional[dict] = None) -> tuple[str, list[dict]]:
        """The bridge data and the targets that had no route (skipped).

        FreeSWITCH reads ``{...}`` global variables only at the very start of the dial string,
        so a routed leg's own ``{...}`` block (the LCR's fail_on_single_reject) is lifted into
        the one global block; its ``[...]`` per-leg variables stay on its legs.
        """
        legs, skipped, lifted = [], [], []
        for target in self.params["target"]:
            try:
                leg = self.leg(ctx, target, users)
            except (SbcError, ValueError) as exc:  # e.g. no LCR route for this number
                skipped.append({"target": target, "reason": getattr(exc, "message", str(exc))})
                continue
            if not leg:
                skipped.append({"target": target, "reason": "no route"})
                continue
            globals_, leg = split_global_vars(leg)
            if globals_:
                lifted.append(globals_)
            legs.append(leg)
        # leg_timeout too: a user/ target's endpoint runs its own inner originate and reads only
        # the caller's call_timeout or the dial string's leg_timeout (mod_dptools
        # user_outgoing_channel); with call_timeout alone in {...} it rang for 60 s (real switch)
        variables = [f"call_timeout={self.params['timeout']}", f"leg_timeout={self.params['timeout']}"]
        if self.params.get("callerId"):
            variables.append(f"origination_caller_id_number={self.params['callerId']}")
        variables.append(f"sbc_trace_id={ctx.trace_id}")
        if dial_id and lifted:  # a routed leg exports it back when it answers (answering_carrier)
            variables.append(f"{DIAL_ID_VARIABLE}={dial_id}")
        variables.extend(v for v in lifted if v not in variables)
        return ("{" + ",".join(variables) + "}" + "|".join(legs)) if legs else "", skipped

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        """Bridge the targets before a queue target; when none answered, the caller waits in
        the queue (a queue target is always last: DialSchema)."""
        targets = self.params["target"]
        queue = targets[-1]["name"] if targets[-1]["type"] == "queue" else None
        if queue is None:
            return self._bridge(ctx)
        if len(targets) > 1:
            outcome = Dial({**self.params, "target": targets[:-1]})._bridge(ctx)
            if outcome.reason in ("dial_completed", "caller_id_not_owned"):
                return outcome
            log.info("dial: %s (%s), the caller goes to queue %s", outcome.reason,
                     outcome.data.get("cause") or "-", queue)
        return Queue(Queue.schema().load({"verb": "queue", "name": queue})).execute(ctx)

    def _bridge(self, ctx: VerbContext) -> VerbOutcome:
        """The non-queue targets, in order, as one failover bridge."""
        caller_id = self.params.get("callerId")
        if caller_id and not ctx.owns_number(caller_id):
            ctx.publish("interaction.dial.rejected", {
                "callId": ctx.call_id, "traceId": ctx.trace_id, "accountSid": ctx.account_id,
                "reason": "caller_id_not_owned", "callerId": caller_id})
            return VerbOutcome.end("caller_id_not_owned", callerId=caller_id)
        dial_id = uuid.uuid4().hex
        users: dict = {}
        arg, skipped = self.bridge_arg(ctx, dial_id, users)
        if not arg:
            if skipped and all(s["reason"] == USER_NOT_FOUND for s in skipped):
                return VerbOutcome.end(USER_NOT_FOUND, skipped=skipped)
            return VerbOutcome.end("no_route", skipped=skipped)
        ctx.set_var("continue_on_fail", "true")
        ctx.set_var("hangup_after_bridge", "true")
        if self.params["record"]:
            path = recording_path(ctx, RECORDING_FORMAT)
            report_when_stopped(ctx, path, fmt=RECORDING_FORMAT, stereo=True)
            prepare_recording(ctx, stereo=True)
            ctx.set_var("bridge_pre_execute_aleg_app", "record_session")
            ctx.set_var("bridge_pre_execute_aleg_data", path)
        # Which carrier answered is read when the legs are bridged (CHANNEL_BRIDGE carries the
        # caller's leg variables after the export): a caller hanging up mid-call ends the
        # bridge with ChannelHungUp, and its completion is never read.
        ctx.on_event("CHANNEL_BRIDGE", lambda event: _record_answering_carrier(ctx, event, dial_id))
        # handlers stay registered for the rest of the call: this dial's bridge only
        agent = {"marked": False, "live": True}

        def on_agent_bridge(event: "Event") -> None:  # a directory user answered: supervisable
            entry = _answering_user(event, users)
            if entry is not None and agent["live"] and not agent["marked"]:
                agent["marked"] = True
                ctx.agent_bridged(entry.agent_id, event)

        if users:
            ctx.on_event("CHANNEL_BRIDGE", on_agent_bridge)
        try:
            done = ctx.execute("bridge", arg)
        finally:
            agent["live"] = False
            if agent["marked"]:
                agent["marked"] = False
                ctx.agent_unbridged()
        status = done.variable("DIALSTATUS") or ""
        cause = done.variable("originate_failed_cause") or done.variable("last_bridge_hangup_cause") or ""
        reason = "dial_completed" if status == "SUCCESS" else "dial_failed"
        answered = answering_carrier(done.variable, dial_id) if status == "SUCCESS" else None
        return VerbOutcome.end(reason, dialStatus=status, cause=cause, skipped=skipped,
                               carrierId=str(answered[0]) if answered else None,
                               gatewayId=str(answered[1]) if answered else None)
