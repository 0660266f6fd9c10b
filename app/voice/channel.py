"""VerbContext over a live outbound ESL connection: the ESL half of the call session.

The call session (app/voice/session.py) owns the call's lifecycle (limiter, number lookup, records);
this class is the part verbs see. Every collaborator that is not the channel itself is passed
in — the webhook client, the LCR router, number ownership, the event publisher — so the session
wires production objects and tests wire real local ones (simulator, local HTTP server, Redis,
the PostgreSQL outbox).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from app.calls import supervision
from app.calls.consult import Consult
from app.calls.interaction_times import InteractionTimes
from app.calls.sip_targets import NOT_LISTED as SIP_NOT_ALLOWED
from app.ops.metrics import QUEUE_WAITERS
from app.settings import get_settings
from app.verbs.registry import VerbList, parse_verb_list

if TYPE_CHECKING:  # pragma: no cover
    import redis

    from app.verbs.context import ApplicationDefaults
    from app.webhooks.client import WebhookClient
    from esl.outbound import OutboundConnection
    from esl.protocol import Event


def publish_event(routing_key: str, payload: dict[str, Any], *, account_id: Optional[str],
                  trace_id: Optional[str]) -> None:
    """Production publisher: the outbox of app.events, exchange chosen by the routing key."""
    from app.events import publish
    from app.events.exchanges import exchange_for

    publish(exchange_for(routing_key), routing_key, payload, account_id=account_id, trace_id=trace_id)


_NOT_IN_MYEVENTS = frozenset({"RECORD_START", "RECORD_STOP", "PLAYBACK_START", "PLAYBACK_STOP"})


@dataclass
class HookTarget:
    """How to call the customer's server for follow-up requests (actionHook, redirect, ...)."""

    client: "WebhookClient"
    base_body: Mapping[str, Any]          # callId, accountSid, applicationSid, from, to, ...
    method: str = "POST"
    secret: Optional[str] = None
    basic_auth: Optional[tuple[str, str]] = None


@dataclass
class ChannelVerbContext:
    conn: "OutboundConnection"
    trace_id: str
    account_id: str
    application: "ApplicationDefaults"
    from_number: str
    to_number: str
    redis: "redis.Redis"
    recordings_dir: str
    hooks: Optional[HookTarget] = None
    router: Optional[Callable[[str], str]] = None          # number → LCR bridge string
    number_owner: Optional[Callable[[str], bool]] = None   # account owns number?
    # sip: dial target → why it is refused, None when allowed (app.calls.sip_targets.refusal);
    # no policy wired means every sip: target is refused
    sip_policy: Optional[Callable[[str], Optional[str]]] = None
    publisher: Optional[Callable[[str, dict[str, Any]], None]] = None
    tags: dict[str, Any] = field(default_factory=dict)
    features: set[str] = field(default_factory=set)        # feature-presence flags (call record)
    journey: list[str] = field(default_factory=list)       # steps in the order they ran
    hangup_reason: Optional[str] = None
    dial_carrier: Optional[tuple[uuid.UUID, uuid.UUID]] = None  # answered the last routed dial
    # (account id, moh name) → the playback argument of its hold music (app.media.moh.MusicLibrary);
    # None: every name is a local_stream
    music: Optional[Callable[[str, str], str]] = None
    # (account id, name) → the path of a file that account uploaded, None if it has none
    # (app.media.moh.MusicLibrary.uploaded); None: no uploads are reachable
    uploads: Optional[Callable[[str, str], Optional[str]]] = None
    # the contact centre (app.contact.distribution.ContactCentre): configured queues and
    # agent delivery; None = the queue verb only holds (no agents are offered the caller)
    contact: Optional[Any] = None
    # the sofia profile ``sip`` dial targets leave from: ``internal`` (the agents' profile) on a
    # callback's agent leg whose contact is ``sofia/internal/…`` (app/contact/endpoints.py)
    sip_profile: str = "external"
    queue_id: Optional[uuid.UUID] = None   # the configured queue the caller joined (call record)
    agent_id: Optional[str] = None         # the agent who answered (call record)
    # queue join/leave, offer, agent answer, holds: the interaction summary's raw times (the
    # session hands its CallContext's, so the record sees what the verbs stamped)
    interaction: InteractionTimes = field(default_factory=InteractionTimes)
    consult: Optional[Consult] = None      # an attended transfer's consultation (app/calls/consult.py)
    # the agent's leg while it talks with the caller in their two-party room after a cancelled
    # consultation (app/verbs/consult_hold.rejoin): what a further consultation takes out
    agent_room_leg: Optional[str] = None
    redis_key_prefix: str = field(default_factory=lambda: get_settings().redis_key_prefix)
    _subscribed: set[str] = field(default_factory=set, repr=False)

    @property
    def call_id(self) -> str:
        return self.conn.uuid

    @property
    def switch_id(self) -> str:
        """The Core-UUID of the FreeSWITCH this call is on (agents registered there can be
        bridged from it)."""
        return self.conn.channel_data.get("Core-UUID") or ""

    # -- the channel ----------------------------------------------------------------------------
    def ensure_answered(self) -> None:
        """Answer the caller now (``uuid_answer``, see OutboundConnection.answer)."""
        self.conn.answer()

    def execute(self, app: str, arg: str = "", timeout: Optional[float] = None) -> "Event":
        return self.conn.execute(app, arg, timeout=timeout)

    def execute_async(self, app: str, arg: str = "") -> str:
        return self.conn.execute_async(app, arg)

    def poll_execute(self, app_uuid: str, timeout: float) -> Optional["Event"]:
        return self.conn.poll_execute(app_uuid, timeout)

    def hold_music(self, moh: str) -> str:
        return self.music(self.account_id, moh) if self.music is not None else f"local_stream://{moh}"

    def uploaded_audio(self, name: str) -> Optional[str]:
        """The path of the file this call's account uploaded as ``name`` (its own folder only),
        None when it has none by that name (or uploads are not wired)."""
        return self.uploads(self.account_id, name) if self.uploads is not None else None

    def set_var(self, name: str, value: str) -> None:
        self.conn.set_var(name, value)

    def api(self, cmd: str) -> str:
        return self.conn.api(cmd)

    def hangup(self, cause: str = "NORMAL_CLEARING", reason: Optional[str] = None) -> None:
        self.hangup_reason = reason
        self.conn.hangup(cause)

    def on_event(self, event_name: str, handler: Callable[["Event"], None]) -> None:
        """Register ``handler``; events that ``myevents`` does not deliver (RECORD_*,
        PLAYBACK_*: see the captures' README; CUSTOM subclasses such as
        ``mod_audio_fork::connect_failed``, checked on the real switch) are subscribed once per
        call."""
        needs_subscription = event_name in _NOT_IN_MYEVENTS or "::" in event_name
        if needs_subscription and event_name not in self._subscribed:
            self.conn.subscribe(event_name)
            self._subscribed.add(event_name)
        self.conn.on(event_name, handler)

    # -- the rest of the platform ---------------------------------------------------------------
    def fetch_instructions(self, url: str, extra: dict[str, Any]) -> Optional[VerbList]:
        if self.hooks is None:
            raise RuntimeError("this call has no webhook configured for follow-up requests")
        body = {**self.hooks.base_body, "tags": dict(self.tags), **extra}
        reply = self.hooks.client.fetch_instructions(url, self.hooks.method, body,
                                                     secret=self.hooks.secret,
                                                     basic_auth=self.hooks.basic_auth)
        return None if reply is None else parse_verb_list(reply)

    def publish(self, routing_key: str, payload: dict[str, Any]) -> None:
        if self.publisher is not None:
            self.publisher(routing_key, payload)
        else:
            publish_event(routing_key, payload, account_id=self.account_id, trace_id=self.trace_id)

    def lcr_bridge_string(self, number: str) -> str:
        if self.router is None:
            raise RuntimeError("no least-cost router configured")
        return self.router(number)

    def owns_number(self, number: str) -> bool:
        return bool(self.number_owner and self.number_owner(number))

    def sip_target_refusal(self, uri: str) -> Optional[str]:
        return SIP_NOT_ALLOWED if self.sip_policy is None else self.sip_policy(uri)

    def record_feature(self, name: str) -> None:
        self.features.add(name)

    def agent_bridged(self, agent_id: Optional[str], event: Optional["Event"]) -> None:
        supervision.note_agent_bridged(self.redis, self.redis_key_prefix, call_id=self.call_id,
                                       account_id=self.account_id, agent_id=agent_id, event=event,
                                       switch=self.switch_id, trace_id=self.trace_id)

    def agent_unbridged(self) -> None:
        supervision.note_agent_unbridged(self.redis, self.redis_key_prefix, self.call_id)

    def waiting_in_queue(self, waiting: bool) -> None:
        (QUEUE_WAITERS.join if waiting else QUEUE_WAITERS.leave)(self.call_id)

    def record_dial_carrier(self, carrier_id: uuid.UUID, gateway_id: uuid.UUID) -> None:
        self.dial_carrier = (carrier_id, gateway_id)

    def journey_step(self, step: str, details: Optional[dict[str, Any]] = None) -> None:
        self.journey.append(step)

    def journey_note(self, note: str) -> None:
        self.journey.append(note)
