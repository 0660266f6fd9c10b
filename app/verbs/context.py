"""What a verb may ask of the call it runs on.

Verbs never touch a socket, the database or the webhook client directly: the call session
(app/voice/session.py) implements this Protocol, so the same verb classes run for webhook replies,
``app_json`` and stored flows, and the verb code stays a pure translation of JSON into
FreeSWITCH applications.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover - typing only
    import redis

    from app.calls.consult import Consult
    from app.calls.interaction_times import InteractionTimes
    from app.verbs.base import Verb
    from esl.protocol import Event


class ApplicationDefaults(Protocol):
    """The application's say defaults (SPEC "Application": language, voice)."""

    language: Optional[str]
    voice: Optional[str]


@runtime_checkable
class VerbContext(Protocol):
    call_id: str              # FreeSWITCH Unique-ID of this leg (the webhook's callId)
    trace_id: str             # stable for the conversation (call record, recording, transcript)
    account_id: str
    application: ApplicationDefaults
    from_number: str
    to_number: str
    tags: dict[str, Any]      # merged by `tag`, posted with later hook requests
    recordings_dir: str       # where FreeSWITCH writes record_session files
    redis: "redis.Redis"      # queue positions (keys under redis_key_prefix)
    redis_key_prefix: str     # the deployment's Redis key prefix (settings.redis_key_prefix)
    contact: Any              # app.contact.distribution.ContactCentre, or None (queue holds only)
    queue_id: Optional[uuid.UUID]  # set by the queue verb: the configured queue (call record)
    agent_id: Optional[str]        # set by the queue verb: the agent who answered (call record)
    interaction: "InteractionTimes"  # stamped by the queue verb (app/calls/interaction_times.py)
    switch_id: str                 # Core-UUID of the call's FreeSWITCH (agents registered there)
    consult: "Optional[Consult]"   # an attended transfer's consultation in progress (app/calls/consult.py)
    agent_room_leg: Optional[str]  # the agent's leg in the caller's room after a cancelled consultation

    def ensure_answered(self) -> None:
        """Answer the caller now if nothing has yet (the queue verb, before an agent's offer:
        the caller hears the hold music instead of ringing)."""

    def execute(self, app: str, arg: str = "", timeout: Optional[float] = None) -> "Event":
        """sendmsg execute and wait for the matching CHANNEL_EXECUTE_COMPLETE.

        Raises esl.errors.ChannelHungUp when the caller hangs up first; verbs let it propagate.
        """

    def execute_async(self, app: str, arg: str = "") -> str:
        """sendmsg execute without waiting; returns the Application-UUID."""

    def poll_execute(self, app_uuid: str, timeout: float) -> Optional["Event"]:
        """Wait up to ``timeout`` s for an ``execute_async`` app's CHANNEL_EXECUTE_COMPLETE;
        None while it still runs (poll again). Raises esl.errors.ChannelHungUp on hang-up."""

    def hold_music(self, moh: str) -> str:
        """What ``playback`` plays for a queue's ``moh``: the shipped default music file for
        ``default``, the account's uploaded file of that name, else ``local_stream://<moh>``."""

    def set_var(self, name: str, value: str) -> None:
        """Set a channel variable on this leg (the session uses ``uuid_setvar``: no app queue)."""

    def api(self, cmd: str) -> str:
        """FreeSWITCH ``api`` command; returns the reply body."""

    def hangup(self, cause: str = "NORMAL_CLEARING", reason: Optional[str] = None) -> None:
        """Hang up this leg; ``reason`` is kept for the call record."""

    def fetch_instructions(self, url: str, extra: dict[str, Any]) -> Optional[list["Verb"]]:
        """POST like the first webhook request plus tags and ``extra``; validate the reply.

        Returns the parsed verb list, or None for an empty body (the call ends). Raises
        VerbListRejected for an invalid reply and the webhook client's error after 3 attempts.
        """

    def publish(self, routing_key: str, payload: dict[str, Any]) -> None:
        """Publish an event (the session picks the exchange from the routing key)."""

    def lcr_bridge_string(self, number: str) -> str:
        """Least-cost-routing bridge string for a phone number (``|`` failover inside)."""

    def owns_number(self, number: str) -> bool:
        """True when the account owns ``number`` (dial callerId rule)."""

    def sip_target_refusal(self, uri: str) -> Optional[str]:
        """Why a ``sip:`` dial target may not be dialled (not listed for the account, or its
        host fails the address policy), or None (app.calls.sip_targets)."""

    def record_feature(self, name: str) -> None:
        """Mark a feature-presence flag on the call record (e.g. ``has_recording``)."""

    def agent_bridged(self, agent_id: Optional[str], event: Optional["Event"]) -> None:
        """The caller is bridged to an agent's phone (``event``: its CHANNEL_BRIDGE): the call
        can be supervised from now on (app/calls/supervision.py). Never raises."""

    def agent_unbridged(self) -> None:
        """The agent's bridge ended: the call can no longer be supervised. Never raises."""

    def waiting_in_queue(self, waiting: bool) -> None:
        """The caller joins (True) or leaves (False) a queue's line (the process's metrics)."""

    def record_dial_carrier(self, carrier_id: uuid.UUID, gateway_id: uuid.UUID) -> None:
        """The carrier and gateway that answered a dial to a phone number (call record)."""

    def journey_step(self, step: str, details: Optional[dict[str, Any]] = None) -> None:
        """A verb (or flow node) starts: the call journey and the interaction.* timeline."""

    def journey_note(self, note: str) -> None:
        """A warning or note in the call's journey (call record), e.g. a voice substituted;
        not a timeline step (no event)."""

    def on_event(self, event_name: str, handler: Callable[["Event"], None]) -> None:
        """Call ``handler`` for each later event of this channel with that Event-Name."""
