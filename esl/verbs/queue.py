"""queue → the caller waits on music on hold with position announcements.

Each round: ``speak flite|<voice>|You are caller number N`` (when announcePosition), then
``set playback_timeout_sec=<whole seconds>`` + ``playback local_stream://<moh>`` so the hold
music returns after the interval, and a ``sleep`` for what is left to the millisecond. The
maximum wait is one deadline from the moment the caller joins: announcements count (they
take ~1.6 s each with flite; not counting them made a 12 s wait last 16.8 s on the real
switch), no announcement starts within ANNOUNCEMENT_ALLOWANCE_SECONDS of the deadline, and
each hold is cut to what remains. When the deadline is reached: POST ``timeoutHook`` and run
its reply, or end the list. Position comes from a Redis list per queue.

With the contact centre wired (``ctx.contact``, the controller always wires it) the name is
the account's configured queue (docs/agents.md): its moh, max wait, announcements and timeout
hook apply unless the verb sets them, an unknown name ends the call with ``queue_not_found``,
and between hold rounds of QUEUE_CLAIM_INTERVAL_SECONDS the caller claims the longest-idle
registered agent (atomic across controllers, app/contact/presence.py). The agent's
``user/<sip user>@<account subdomain>`` is bridged from the caller's leg with the queue's offer
timeout (the caller hears the hold music meanwhile); no answer → ``agent.missed`` and the
caller rejoins the line at its place. Events: queue.caller.enqueued, queue.assignment,
agent.offer, agent.accept / agent.missed / agent.reject (the phone declined), then queue.caller.dequeued (timeout, or answered) or
queue.caller.abandoned (hangup).
"""
from __future__ import annotations

import time
import uuid

from typing import TYPE_CHECKING, Any, Optional

from marshmallow import post_load, validate

from app import limits
from app.calls.interaction_times import utc_now
from app.calls import supervision
from app.contact.presence import Presence
from app.ops.metrics import QUEUE_WAITERS
from app.settings import get_settings
from esl.verbs import tts
from esl.verbs.base import Verb, VerbOutcome, VerbSchema
from esl.verbs.context import VerbContext
from esl.verbs.fields import HookUrl, StrictBoolean, StrictInteger, Text

if TYPE_CHECKING:  # pragma: no cover
    from app.contact.distribution import QueueConfig
    from app.contact.presence import Candidate

QUEUE_NAME_PATTERN = r"^[A-Za-z0-9 _.\-]{1,64}$"
MOH_PATTERN = r"^[A-Za-z0-9_.\-/]{1,64}$"
# No position announcement starts closer than this to the maximum wait: flite says "You are
# caller number N" in ~1.6 s (measured on FreeSWITCH 1.10.12), so one started earlier ends in time.
ANNOUNCEMENT_ALLOWANCE_SECONDS = 3.0
# switch_ivr_play_file honours playback_timeout_sec only above 1.
PLAYBACK_TIMEOUT_MIN_SECONDS = 2
# A waiting caller re-reads its queue's members this often: agents added to the queue (or
# given SIP credentials) while it waits are offered it too.
QUEUE_MEMBERS_REFRESH_SECONDS = 30
# Offer failures that are the agent declining, not missing it: a phone's 486 Busy Here
# (USER_BUSY) or 603 Decline (CALL_REJECTED) → agent.reject, not counted as a miss.
REJECT_CAUSES = frozenset({"USER_BUSY", "CALL_REJECTED"})
# The offer ended because the caller's own leg went away (its hang-up may reach us after the
# bridge's completion): neither a miss nor a reject.
CALLER_LEFT_CAUSE = "ORIGINATOR_CANCEL"
# Less than this left: the wait is over (not worth another playback/sleep round trip).
_DEADLINE_SLACK_SECONDS = 0.05


class QueueSchema(VerbSchema):
    name = Text(required=True, pattern=QUEUE_NAME_PATTERN,
                pattern_message="1-64 letters, digits, spaces, '_', '.', '-'.")
    moh = Text(load_default="default", pattern=MOH_PATTERN,
               pattern_message="A local_stream name: letters, digits, '_', '.', '-', '/'.")
    timeout = StrictInteger(load_default=limits.QUEUE_DEFAULT_MAX_WAIT_SECONDS,
                            validate=validate.Range(min=1, max=limits.QUEUE_MAX_WAIT_SECONDS))
    timeoutHook = HookUrl()
    announcePosition = StrictBoolean(load_default=True)
    announceInterval = StrictInteger(load_default=limits.QUEUE_DEFAULT_ANNOUNCE_INTERVAL_SECONDS,
                                     validate=validate.Range(
                                         min=limits.QUEUE_MIN_ANNOUNCE_INTERVAL_SECONDS,
                                         max=limits.QUEUE_MAX_WAIT_SECONDS))

    @post_load(pass_original=True)
    def _note_given(self, data: dict, original: Any, **_: object) -> dict:
        """Which settings the verb names itself (they win over the configured queue's)."""
        given = original.keys() if isinstance(original, dict) else ()
        data["given"] = frozenset(k for k in given if k in _CONFIGURABLE)
        return data


# verb attribute -> QueueConfig attribute (docs/agents.md "Queue settings")
_CONFIGURABLE = {"moh": "moh", "timeout": "max_wait_seconds", "timeoutHook": "timeout_hook_url",
                 "announcePosition": "announce_position", "announceInterval": "announce_interval_seconds"}


def position_text(position: int) -> str:
    return f"You are caller number {position}"


class Queue(Verb):
    name = "queue"
    schema_class = QueueSchema
    ends_list = True

    def _event(self, ctx: VerbContext, **extra: object) -> dict:
        return {"callId": ctx.call_id, "traceId": ctx.trace_id, "accountSid": ctx.account_id,
                "queue": self.params["name"], **extra}

    def _settings(self, config: "Optional[QueueConfig]") -> dict:
        p = dict(self.params)
        if config is not None:
            for attr, column in _CONFIGURABLE.items():
                if attr not in p.get("given", ()):
                    p[attr] = getattr(config, column)
        return p

    def execute(self, ctx: VerbContext) -> VerbOutcome:
        contact = ctx.contact
        config = None
        if contact is not None:
            config = contact.queue(ctx.account_id, self.params["name"])
            if config is None:  # the session reports it: call.failed reason queue_not_found
                return VerbOutcome.end("queue_not_found", queue=self.params["name"])
            ctx.queue_id = config.id
            # queues.short_abandon_seconds once QueueConfig carries it (the strategies work
            # adds it); the platform default until then
            ctx.interaction.short_abandon_seconds = getattr(
                config, "short_abandon_seconds", limits.SHORT_ABANDON_SECONDS)
        p = self._settings(config)
        presence = contact.presence if contact is not None else Presence(ctx.redis, get_settings().redis_key_prefix)
        score = presence.join(ctx.account_id, p["name"], ctx.call_id)
        times = ctx.interaction
        if times.queue_joined_at is None:  # queued again (timeout hook): the wait counts from the first
            times.queue_joined_at = utc_now()
        QUEUE_WAITERS.join(ctx.call_id)
        ctx.publish("queue.caller.enqueued", self._event(
            ctx, position=presence.position(ctx.account_id, p["name"], ctx.call_id)))
        voice = tts.resolve_voice(ctx, None)
        timeout_set = False
        joined = config_loaded = time.monotonic()
        deadline = joined + p["timeout"]
        next_announcement = joined
        outcome: Optional[VerbOutcome] = None
        media_started = False  # a media application answers the caller (the session's lazy answer)
        reason = "hangup"
        try:
            while (remaining := deadline - time.monotonic()) > _DEADLINE_SLACK_SECONDS:
                if config is not None:
                    if time.monotonic() - config_loaded >= QUEUE_MEMBERS_REFRESH_SECONDS:
                        config, config_loaded = contact.refreshed(ctx.account_id, config), time.monotonic()
                    agent = contact.claim(ctx.account_id, config, ctx.call_id, ctx.switch_id)
                    if agent is not None:
                        if not media_started:  # not left ringing through the offer: answered,
                            ctx.execute("answer")  # it hears the hold music (transfer_ringback)
                            media_started = True
                        outcome = self._offer(ctx, contact, config, agent, p, joined)
                        if outcome is not None:
                            reason = "answered"
                            break
                        presence.rejoin(ctx.account_id, p["name"], ctx.call_id, score)
                        continue
                now = time.monotonic()
                if p["announcePosition"] and now >= next_announcement and deadline - now > ANNOUNCEMENT_ALLOWANCE_SECONDS:
                    position = presence.position(ctx.account_id, p["name"], ctx.call_id)
                    if position is not None:
                        ctx.execute("speak", tts.speak_arg(voice, position_text(position)))
                        media_started = True
                    next_announcement = time.monotonic() + p["announceInterval"]
                remaining = deadline - time.monotonic()
                if remaining <= _DEADLINE_SLACK_SECONDS:
                    break
                chunk = remaining
                until_announcement = next_announcement - time.monotonic()
                if p["announcePosition"] and until_announcement > 0:
                    chunk = min(chunk, until_announcement)
                if config is not None:
                    chunk = min(chunk, limits.QUEUE_CLAIM_INTERVAL_SECONDS)
                timeout_set = self._hold(ctx, chunk) or timeout_set
                media_started = True
            if outcome is None:  # the loop ended at the deadline
                reason = "timeout"
        finally:
            if reason == "hangup" and ctx.agent_id is not None:  # hung up talking to the agent
                reason = "answered"
            waited = round(time.monotonic() - joined)
            times.queue_left_at, times.queue_result = utc_now(), reason
            presence.leave(ctx.account_id, p["name"], ctx.call_id)
            QUEUE_WAITERS.leave(ctx.call_id)
            key = "queue.caller.abandoned" if reason == "hangup" else "queue.caller.dequeued"
            ctx.publish(key, self._event(ctx, waitedSeconds=waited, reason=reason))
        if outcome is not None:
            return outcome
        if timeout_set:  # left set, it would cut every later playback of this call short
            ctx.set_var("playback_timeout_sec", "")
        hook = p.get("timeoutHook")
        if hook:
            return VerbOutcome.replace(ctx.fetch_instructions(hook, {"queue": p["name"], "queueResult": "timeout"}))
        return VerbOutcome.end("queue_timeout")

    def _offer(self, ctx: VerbContext, contact: Any, config: "QueueConfig", agent: "Candidate",
               p: dict, joined: float) -> Optional[VerbOutcome]:
        """Ring the claimed agent from the caller's leg. Returns the verb's outcome when the
        agent answered (the call is over when the bridge returns), None when the offer was
        missed (the caller goes back in line)."""
        offer = {"agentId": agent.agent_id, "queueId": str(config.id),
                 "waitedSeconds": round(time.monotonic() - joined)}
        ctx.publish("queue.assignment", self._event(ctx, **offer))
        ctx.publish("agent.offer", self._event(ctx, **offer, timeoutSeconds=config.offer_timeout_seconds,
                                               **{"from": ctx.from_number or None}))
        # the agent's leg gets a known uuid: the agent channel's reject/hangup/hold act on it
        leg_id = str(uuid.uuid4())
        # handlers stay registered for the rest of the call: this offer's answers only while
        # its bridge runs (a later offer's CHANNEL_BRIDGE is not this agent's accept)
        answered: dict[str, Any] = {"at": None, "live": True}
        offered_at = utc_now()

        def on_bridge(_event: Any) -> None:
            if answered["live"] and answered["at"] is None:
                answered["at"] = time.monotonic()
                times = ctx.interaction
                times.offered_at, times.connected_at = offered_at, utc_now()
                contact.accepted(ctx.account_id, agent.agent_id)
                ctx.agent_id = agent.agent_id
                times.segment_id = contact.open_segment(ctx.account_id, ctx.trace_id, ctx.call_id,
                                                        agent.agent_id, times.connected_at)
                supervision.note_agent_bridged(ctx, agent.agent_id, _event)  # supervisable now
                ctx.publish("agent.accept", self._event(ctx, **offer))

        ctx.on_event("CHANNEL_BRIDGE", on_bridge)
        ctx.set_var("continue_on_fail", "true")
        ctx.set_var("hangup_after_bridge", "true")
        ctx.set_var("transfer_ringback", f"local_stream://{p['moh']}")
        ctx.set_var("playback_timeout_sec", "")
        dial = (f"{{leg_timeout={config.offer_timeout_seconds},origination_uuid={leg_id},sbc_trace_id={ctx.trace_id},"
                f"sbc_agent_id={agent.agent_id},sbc_queue_id={config.id}}}"
                f"user/{agent.sip_username}@{agent.domain}")
        keeper = contact.keep_engaged(ctx.account_id, agent.agent_id, ctx.call_id)
        contact.presence.set_agent_leg(ctx.account_id, agent.agent_id, ctx.call_id, leg_id)
        try:
            done = ctx.execute("bridge", dial)
        except BaseException:  # the caller hung up: during the ring, or during the talk
            keeper.kill(block=False)
            answered["live"] = False
            if answered["at"] is None:
                contact.abandoned_offer(ctx.account_id, agent.agent_id)
            else:
                supervision.note_agent_unbridged(ctx)
                contact.call_over(ctx.account_id, config, agent.agent_id)
            raise
        if answered["at"] is None and (done.variable("DIALSTATUS") or "") == "SUCCESS":
            on_bridge(done)
        keeper.kill(block=False)
        answered["live"] = False
        if answered["at"] is None:
            cause = done.variable("originate_failed_cause") or done.variable("last_bridge_hangup_cause") or ""
            if cause == CALLER_LEFT_CAUSE:  # the caller hung up while the agent's phone rang
                contact.abandoned_offer(ctx.account_id, agent.agent_id)
            elif cause in REJECT_CAUSES:  # the phone declined (486/603): the agent's choice
                ctx.publish("agent.reject", self._event(ctx, **offer, cause=cause))
                contact.abandoned_offer(ctx.account_id, agent.agent_id)
            else:
                ctx.publish("agent.missed", self._event(ctx, **offer, cause=cause))
                contact.missed(ctx.account_id, config, agent.agent_id)
            return None
        supervision.note_agent_unbridged(ctx)
        contact.call_over(ctx.account_id, config, agent.agent_id)
        return VerbOutcome.end("queue_answered", agentId=agent.agent_id)

    def _hold(self, ctx: VerbContext, seconds: float) -> bool:
        """Hold music for ``seconds``. ``playback_timeout_sec`` takes whole seconds and
        FreeSWITCH ignores values below 2 (switch_ivr_play_file: ``tmp > 1``: with 1 the
        endless stream never returns), so the music plays the whole seconds from 2 up and a
        ``sleep`` (milliseconds) covers the rest — as it does when the stream ends early (a
        missing stream returns at once). Returns whether it set ``playback_timeout_sec``."""
        started = time.monotonic()
        music = seconds >= PLAYBACK_TIMEOUT_MIN_SECONDS
        if music:
            ctx.set_var("playback_timeout_sec", str(int(seconds)))
            ctx.execute("playback", f"local_stream://{self.params['moh']}")
        rest = seconds - (time.monotonic() - started)
        if rest > _DEADLINE_SLACK_SECONDS:
            ctx.execute("sleep", str(int(rest * 1000)))
        return music
