"""queue → the caller waits on music on hold with position announcements.

The hold music is one ``playback`` of the queue's music (``ctx.hold_music(moh)``: the shipped
default, the account's uploaded file, or ``local_stream://<moh>``) that runs for the whole wait
(app/verbs/hold_music.py: no silence between rounds); the verb does its rounds while it plays
and stops it only for a position announcement (``speak flite|<voice>|You are caller number N``,
the music sent again the moment it completes), an offer or the end of the wait. The maximum wait is one deadline from the moment the caller joins: announcements count (they
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
agent.offer, agent.accept / agent.missed / agent.reject (the phone declined), then queue.caller.dequeued (timeout, answered, or redirected: its verbs replaced by a live
``redirect`` while it waited) or queue.caller.abandoned (hangup).
"""
from __future__ import annotations

import logging
import time
import uuid
from typing import TYPE_CHECKING, Any, Optional

from marshmallow import post_load, validate

from app import limits
from app.calls.consult import (
    COMPLETE,
    CONFERENCE,
    WITHDRAWN_CALLER_LEFT,
    WITHDRAWN_CANCELLED,
    Consult,
    back_reason,
    consult_failed,
    release_target,
    withdraw_offer,
)
from app.calls.interaction_times import utc_now
from app.contact.handle_samples import HandleSamples
from app.contact.presence import Presence
from app.contact.queue_stats import QueueStats, wait_text
from app.verbs import three_way, tts
from app.verbs.base import Verb, VerbOutcome, VerbSchema, VerbsReplaced
from app.verbs.consult_hold import hold_until_decided, rejoin
from app.verbs.context import VerbContext
from app.verbs.fields import HookUrl, StrictBoolean, StrictInteger, Text
from app.verbs.hold_music import HoldMusic

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # pragma: no cover
    from app.contact.distribution import QueueConfig
    from app.contact.presence import Candidate

QUEUE_NAME_PATTERN = r"^[A-Za-z0-9 _.\-]{1,64}$"
MOH_PATTERN = r"^[A-Za-z0-9_.\-/]{1,64}$"
AGENT_ID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
# No position announcement starts closer than this to the maximum wait: flite says "You are
# caller number N" in ~1.6 s (measured on FreeSWITCH 1.10.12), so one started earlier ends in time.
ANNOUNCEMENT_ALLOWANCE_SECONDS = 3.0
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


def _stop(keeper: Any) -> None:
    """Stop refreshing an engaged mark (a ``ContactCentre.keep_engaged`` greenlet, or None)."""
    if keeper is not None:
        keeper.kill(block=False)


class QueueSchema(VerbSchema):
    name = Text(required=True, pattern=QUEUE_NAME_PATTERN,
                pattern_message="1-64 letters, digits, spaces, '_', '.', '-'.")
    moh = Text(load_default="default", pattern=MOH_PATTERN,
               pattern_message="'default', an uploaded hold music name or a local_stream name: "
                               "letters, digits, '_', '.', '-', '/'.")
    timeout = StrictInteger(load_default=limits.QUEUE_DEFAULT_MAX_WAIT_SECONDS,
                            validate=validate.Range(min=1, max=limits.QUEUE_MAX_WAIT_SECONDS))
    timeoutHook = HookUrl()
    announcePosition = StrictBoolean(load_default=True)
    announceInterval = StrictInteger(load_default=limits.QUEUE_DEFAULT_ANNOUNCE_INTERVAL_SECONDS,
                                     validate=validate.Range(
                                         min=limits.QUEUE_MIN_ANNOUNCE_INTERVAL_SECONDS,
                                         max=limits.QUEUE_MAX_WAIT_SECONDS))
    # higher first: the line is ordered by priority, then by enqueue time
    priority = StrictInteger(load_default=limits.QUEUE_MIN_PRIORITY,
                             validate=validate.Range(min=limits.QUEUE_MIN_PRIORITY, max=limits.QUEUE_MAX_PRIORITY))
    # offer the caller to this agent only (an agent's blind transfer to another agent runs it):
    # it need not be a member of the queue, it must have SIP credentials
    agent = Text(pattern=AGENT_ID_PATTERN, pattern_message="An agent id.")

    @post_load(pass_original=True)
    def _note_given(self, data: dict, original: Any, **_: object) -> dict:
        """Which settings the verb names itself (they win over the configured queue's)."""
        given = original.keys() if isinstance(original, dict) else ()
        data["given"] = frozenset(k for k in given if k in _CONFIGURABLE)
        return data


# verb attribute -> QueueConfig attribute (docs/agents.md "Queue settings")
_CONFIGURABLE = {"moh": "moh", "timeout": "max_wait_seconds", "timeoutHook": "timeout_hook_url",
                 "announcePosition": "announce_position", "announceInterval": "announce_interval_seconds"}


def position_text(position: int, ewt_seconds: Optional[int] = None) -> str:
    """"You are caller number N", plus the estimated wait when the queue has handle times."""
    text = f"You are caller number {position}"
    return text if ewt_seconds is None else f"{text}. {wait_text(ewt_seconds)}"


# Set on every leg of a ring_all offer and exported to the caller's leg by the one that
# answers (bridge_export_vars, as the dial verb's carrier ids): which agent answered.
OFFER_ID_VARIABLE = "sbc_offer_id"
OFFER_AGENT_VARIABLE = "sbc_agent_id"
# What the caller hears while the agent holds the call: FreeSWITCH plays the *holding* leg's
# ``hold_music`` to its partner, both for ``uuid_hold <agent leg>`` (switch_ivr_hold) and for
# the agent's phone holding with a re-INVITE (switch_core_media_toggle_hold), so it is set on
# the agent's leg, to the queue's music; unset, the profile's ``local_stream://moh`` played.
HOLD_MUSIC_VARIABLE = "hold_music"


def _serving(presence: Presence, config: "QueueConfig") -> int:
    """Members with a live SIP registration (any state): the agents the line moves through."""
    pipe = presence.redis.pipeline()
    for member in config.members:
        pipe.exists(presence.reg_key(member.domain, member.sip_username))
    return sum(1 for live in pipe.execute() if live)


def _ring_all_legs(offered: list, offer_id: str, leg_ids: dict, legs: dict) -> str:
    """``[vars]user/a@d,[vars]user/b@d``: rung at once, the first to answer is bridged and
    FreeSWITCH cancels the others (LOSE_RACE); each leg exports its agent id and the offer id.
    ``legs``: agent id → (leg variables, endpoint) (an agent on another node: its node's profile)."""
    exports = f"{OFFER_AGENT_VARIABLE}\\,{OFFER_ID_VARIABLE}"

    def leg(c: "Candidate") -> str:
        leg_vars, endpoint = legs[c.agent_id]
        head = [f"origination_uuid={leg_ids[c.agent_id]}", f"{OFFER_AGENT_VARIABLE}={c.agent_id}",
                f"bridge_export_vars={exports}", *leg_vars]
        return f"[{','.join(head)}]{endpoint}"
    return ",".join(leg(c) for c, _ in offered)


class Queue(Verb):
    name = "queue"
    schema_class = QueueSchema
    ends_list = True
    # how often a waiting caller asks for a free agent (a campaign's answer waits 2 s at most)
    claim_interval_seconds: float = limits.QUEUE_CLAIM_INTERVAL_SECONDS

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
            if self.params.get("agent"):
                config = contact.only_agent(ctx.account_id, config, self.params["agent"])
                if config is None:
                    return VerbOutcome.end("agent_not_found", agent=self.params["agent"])
            ctx.queue_id = config.id
            ctx.interaction.short_abandon_seconds = config.short_abandon_seconds  # the summary's too
        p = self._settings(config)
        music = HoldMusic(ctx, ctx.hold_music(p["moh"]))
        if not p["announcePosition"]:  # the music first: the bookkeeping below runs while it plays
            music.start()  # (with announcements it is queued behind the first one)
        presence = contact.presence if contact is not None else Presence(ctx.redis, ctx.redis_key_prefix)
        stats = QueueStats(presence.redis, presence.prefix)
        score = presence.join(ctx.account_id, p["name"], ctx.call_id, priority=p["priority"])
        times = ctx.interaction
        if times.queue_joined_at is None:  # queued again (timeout hook): the wait counts from the first
            times.queue_joined_at = utc_now()
        times.queue_name, times.queue_priority = p["name"], p["priority"]  # a transfer keeps them
        ctx.waiting_in_queue(True)
        ctx.publish("queue.caller.enqueued", self._event(
            ctx, position=presence.position(ctx.account_id, p["name"], ctx.call_id)))
        voice = tts.resolve_voice(ctx, None)
        joined = config_loaded = time.monotonic()
        deadline = joined + p["timeout"]
        next_announcement = joined
        outcome: Optional[VerbOutcome] = None
        reason = "hangup"
        try:
            while (remaining := deadline - time.monotonic()) > _DEADLINE_SLACK_SECONDS:
                if config is not None:
                    if time.monotonic() - config_loaded >= QUEUE_MEMBERS_REFRESH_SECONDS:
                        config, config_loaded = contact.refreshed(ctx.account_id, config), time.monotonic()
                    offered = contact.claim_agents(ctx.account_id, config, ctx.call_id, ctx.switch_id)
                    if offered:
                        music.stop()  # the offer's transfer_ringback plays it meanwhile
                        ctx.ensure_answered()  # not left ringing through the offer
                        outcome = self._offer(ctx, contact, config, offered, p, joined, stats)
                        if outcome is not None:
                            reason = "answered"
                            break
                        presence.rejoin(ctx.account_id, p["name"], ctx.call_id, score)
                        continue
                now = time.monotonic()
                if p["announcePosition"] and now >= next_announcement and deadline - now > ANNOUNCEMENT_ALLOWANCE_SECONDS:
                    position = presence.position(ctx.account_id, p["name"], ctx.call_id)
                    if position is not None:
                        ewt = None if config is None else stats.estimated_wait_seconds(
                            ctx.account_id, p["name"], position, _serving(presence, config))
                        music.start(after=("speak", tts.speak_arg(voice, position_text(position, ewt))))
                    next_announcement = time.monotonic() + p["announceInterval"]
                remaining = deadline - time.monotonic()
                if remaining <= _DEADLINE_SLACK_SECONDS:
                    break
                chunk = remaining
                until_announcement = next_announcement - time.monotonic()
                if p["announcePosition"] and until_announcement > 0:
                    chunk = min(chunk, until_announcement)
                if config is not None:
                    chunk = min(chunk, self.claim_interval_seconds)
                music.play_for(chunk)
            if outcome is None:  # the loop ended at the deadline
                reason = "timeout"
                music.stop()
        except VerbsReplaced:  # redirected while waiting: it left the line, it did not abandon
            if ctx.agent_id is None:  # (replaced while talking to an agent: answered, below)
                reason = "redirected"
            raise
        finally:
            if reason == "hangup" and ctx.agent_id is not None:  # hung up talking to the agent
                reason = "answered"
            waited_exact = time.monotonic() - joined
            waited = round(waited_exact)
            times.queue_left_at, times.queue_result = utc_now(), reason
            presence.leave(ctx.account_id, p["name"], ctx.call_id)
            ctx.waiting_in_queue(False)
            if reason == "hangup":  # short: under the queue's short_abandon_seconds (0 = never)
                short = config.short_abandon_seconds if config is not None else limits.SHORT_ABANDON_SECONDS
                ctx.publish("queue.caller.abandoned", self._event(
                    ctx, waitedSeconds=waited, reason=reason, shortAbandon=waited_exact < short))
            else:
                ctx.publish("queue.caller.dequeued", self._event(ctx, waitedSeconds=waited, reason=reason))
        if outcome is not None:
            return outcome
        hook = p.get("timeoutHook")
        if hook:
            return VerbOutcome.replace(ctx.fetch_instructions(hook, {"queue": p["name"], "queueResult": "timeout"}))
        return VerbOutcome.end("queue_timeout")

    def _offer(self, ctx: VerbContext, contact: Any, config: "QueueConfig", offered: list,
               p: dict, joined: float, stats: QueueStats) -> Optional[VerbOutcome]:
        """Ring the claimed agent from the caller's leg (ring_all: every claimed agent at once,
        one bridge with ``,``-separated legs; the first to answer wins, the others are put
        back in the idle line, not missed). Returns the verb's outcome when an agent answered
        (the call is over when the bridge returns), None when the offer was missed (the
        caller goes back in line)."""
        agent = offered[0][0]
        waited_ms = int((time.monotonic() - joined) * 1000)
        offers = {c.agent_id: {"agentId": c.agent_id, "queueId": str(config.id), "waitedSeconds": round(waited_ms / 1000)}
                  for c, _ in offered}
        offer = offers[agent.agent_id]
        for c, _ in offered:
            ctx.publish("queue.assignment", self._event(ctx, **offers[c.agent_id]))
            ctx.publish("agent.offer", self._event(ctx, **offers[c.agent_id], timeoutSeconds=config.offer_timeout_seconds,
                                                   **{"from": ctx.from_number or None}))
        # the agent's leg gets a known uuid: the agent channel's reject/hangup/hold act on it
        leg_ids = {c.agent_id: str(uuid.uuid4()) for c, _ in offered}
        leg_id = leg_ids[agent.agent_id]
        offer_id = str(uuid.uuid4())
        # handlers stay registered for the rest of the call: this offer's answers only while
        # its bridge runs (a later offer's CHANNEL_BRIDGE is not this agent's accept)
        answered: dict[str, Any] = {"at": None, "live": True, "agent": agent}
        offered_at = utc_now()
        # one handle-time sample per agent leg that has the caller (a transfer hands it over)
        samples = HandleSamples(stats, ctx.account_id, config.name, ctx.call_id)

        def on_bridge(_event: Any) -> None:
            if answered["live"] and answered["at"] is None:
                agent = answered["agent"] = self._answering(_event, offer_id, offered)
                offer = offers[agent.agent_id]
                self._ring_lost(ctx, contact, offered, agent, keepers)  # ring_all: the others stop
                answered["at"] = answered_at = time.monotonic()
                samples.start(leg_ids[agent.agent_id], answered_at)
                stats.answered(ctx.account_id, config.name, ctx.call_id, int((answered_at - joined) * 1000))
                times = ctx.interaction
                times.segment_started_at = utc_now()
                if times.connected_at is None:  # the first agent's answer (a transfer's is its window's)
                    times.offered_at, times.connected_at = offered_at, times.segment_started_at
                contact.accepted(ctx.account_id, agent.agent_id)
                times.segment_id = contact.open_segment(ctx.account_id, ctx.trace_id, ctx.call_id,
                                                        agent.agent_id, times.segment_started_at)
                # the call counts as with its agent only once the agent's segment exists: a
                # transfer arriving during the write is refused call_not_with_agent, never
                # applied to a window it cannot close as transferred
                ctx.agent_id = agent.agent_id
                ctx.agent_bridged(agent.agent_id, _event)  # supervisable now
                ctx.publish("agent.accept", self._event(ctx, **offer))

        ctx.on_event("CHANNEL_BRIDGE", on_bridge)
        ctx.set_var("continue_on_fail", "true")
        ctx.set_var("hangup_after_bridge", "true")
        music = ctx.hold_music(p["moh"])
        ctx.set_var("transfer_ringback", music)
        # an agent registered on another node is dialled through that node (cross-node offer)
        legs = {c.agent_id: contact.agent_leg(c, ctx.switch_id) for c, _ in offered}
        if len(offered) == 1:
            leg_vars, endpoint = legs[agent.agent_id]
            dial = (f"{{leg_timeout={config.offer_timeout_seconds},origination_uuid={leg_id},sbc_trace_id={ctx.trace_id},"
                    f"sbc_agent_id={agent.agent_id},sbc_queue_id={config.id},{HOLD_MUSIC_VARIABLE}={music}}}"
                    + (f"[{','.join(leg_vars)}]" if leg_vars else "") + endpoint)
        else:
            dial = (f"{{leg_timeout={config.offer_timeout_seconds},sbc_trace_id={ctx.trace_id},"
                    f"sbc_queue_id={config.id},{OFFER_ID_VARIABLE}={offer_id},{HOLD_MUSIC_VARIABLE}={music}}}"
                    + _ring_all_legs(offered, offer_id, leg_ids, legs))
        keepers = {c.agent_id: contact.keep_engaged(ctx.account_id, c.agent_id, ctx.call_id) for c, _ in offered}
        for c, _ in offered:
            contact.presence.set_agent_leg(ctx.account_id, c.agent_id, ctx.call_id, leg_ids[c.agent_id])
        try:
            done = ctx.execute("bridge", dial)
        except BaseException:  # the caller hung up: during the ring, or during the talk
            for keeper in keepers.values():
                keeper.kill(block=False)
            answered["live"] = False
            if answered["at"] is None:
                for c, _ in offered:
                    contact.abandoned_offer(ctx.account_id, c.agent_id)
            else:
                agent = answered["agent"]
                samples.end()
                ctx.agent_unbridged()
                contact.call_over(ctx.account_id, config, agent.agent_id)
            raise
        if answered["at"] is None and (done.variable("DIALSTATUS") or "") == "SUCCESS":
            on_bridge(done)
        answered["live"] = False
        if answered["at"] is not None and ctx.consult is not None:
            try:  # the agent keeps the caller (engaged) through its consultations
                agent_id = self._consults(ctx, contact, config, samples, music)
            except BaseException:
                for keeper in keepers.values():
                    keeper.kill(block=False)
                samples.end()  # whoever has the caller now: never the first agent twice
                ctx.agent_unbridged()
                contact.call_over(ctx.account_id, config, ctx.agent_id or answered["agent"].agent_id)
                raise
            for keeper in keepers.values():
                keeper.kill(block=False)
            if agent_id != answered["agent"].agent_id:  # transferred: the first agent was released then
                samples.end()  # the agent who took the caller (none for a number or sip: target)
                if agent_id is not None:
                    ctx.agent_unbridged()
                    contact.call_over(ctx.account_id, config, agent_id)
                return VerbOutcome.end("queue_answered", agentId=agent_id or answered["agent"].agent_id)
        for keeper in keepers.values():
            keeper.kill(block=False)
        if answered["at"] is None:
            cause = done.variable("originate_failed_cause") or done.variable("last_bridge_hangup_cause") or ""
            for agent, _ in offered:  # ring_all: every agent rang out (or the caller left)
                offer = offers[agent.agent_id]
                if cause == CALLER_LEFT_CAUSE:  # the caller hung up while the agent's phone rang
                    contact.abandoned_offer(ctx.account_id, agent.agent_id)
                elif cause in REJECT_CAUSES:  # the phone declined (486/603): the agent's choice
                    ctx.publish("agent.reject", self._event(ctx, **offer, cause=cause))
                    contact.abandoned_offer(ctx.account_id, agent.agent_id)
                else:
                    ctx.publish("agent.missed", self._event(ctx, **offer, cause=cause))
                    contact.missed(ctx.account_id, config, agent.agent_id)
            return None
        agent = answered["agent"]
        samples.end()
        ctx.agent_unbridged()
        contact.call_over(ctx.account_id, config, agent.agent_id)
        return VerbOutcome.end("queue_answered", agentId=agent.agent_id)

    def _consults(self, ctx: VerbContext, contact: Any, config: "QueueConfig", samples: HandleSamples,
                  music: str) -> Optional[str]:
        """The agent's bridge returned for a consultation (app/calls/consult.py): the caller
        holds, then is bridged back to its agent or to the consulted party, as often as the
        agent consults. Returns the agent who has the caller at the end (None: a number or
        SIP target took it). On complete the consulting agent is released at once (its
        window was closed by the action) and an agent target's window opens."""
        agent_id: Optional[str] = ctx.agent_id
        while ctx.consult is not None:
            consult = ctx.consult
            # a claimed agent target stays engaged while it is consulted and, once it has the
            # caller, until the call ends (then released by call_over like any agent)
            keeper = (contact.keep_engaged(ctx.account_id, consult.target.value, consult.consult_leg)
                      if consult.claimed_since_ms is not None else None)
            try:
                hold_until_decided(ctx, music)
            except BaseException:
                _stop(keeper)
                withdraw_offer(ctx, consult, WITHDRAWN_CALLER_LEFT)
                release_target(contact, ctx.account_id, consult)
                raise
            if consult.outcome == CONFERENCE:  # the agent added the party: a three-way call
                try:
                    return three_way.run(ctx, contact, consult, release_first=lambda: self._first_agent_left(
                        ctx, contact, config, samples, consult))
                finally:
                    _stop(keeper)
            if consult.outcome != COMPLETE:
                _stop(keeper)
                why = back_reason(consult)
                withdraw_offer(ctx, consult, why)
                release_target(contact, ctx.account_id, consult)
                if why != WITHDRAWN_CANCELLED:  # not its own doing: the consulting agent is told
                    consult_failed(ctx, consult, why)
            else:  # the first agent's sample ends; an agent target's begins
                samples.hand_over(consult.consult_leg if consult.target.kind == "agent" else None)
                ctx.agent_unbridged()
                contact.call_over(ctx.account_id, config, consult.from_agent)
                agent_id = consult.target.value if consult.target.kind == "agent" else None
                ctx.agent_id = agent_id or ctx.agent_id  # the record's agent: the last agent who answered
                if agent_id is not None:
                    times = ctx.interaction
                    times.segment_started_at = utc_now()
                    contact.accepted(ctx.account_id, agent_id)
                    times.segment_id = contact.open_segment(ctx.account_id, ctx.trace_id, ctx.call_id,
                                                            agent_id, times.segment_started_at)
                    ctx.agent_bridged(agent_id, None)
                    keeper = self._consulted_took_call(ctx, contact, config, consult, keeper)
            try:
                rejoin(ctx, consult)
            except BaseException:
                _stop(keeper)
                if ctx.consult is not None:  # the caller left as its agent consulted again
                    release_target(contact, ctx.account_id, ctx.consult)
                    ctx.consult = None
                raise
            if consult.outcome == COMPLETE:
                _stop(keeper)
                return agent_id
        return agent_id

    def _consulted_took_call(self, ctx: VerbContext, contact: Any, config: "QueueConfig", consult: Consult,
                             keeper: Any) -> Any:
        """The consulted agent has the caller: engaged by the call with its consulted leg as its
        leg (the agent channel's hangup/hold/dtmf act on it), and ``agent.accept`` (kind
        ``consult``): its channel gets ``call`` ``connected``, as after a queue offer's answer.
        Returns the greenlet that keeps its engaged mark now."""
        agent_id = consult.target.value
        if contact.consulted_took_call(ctx.account_id, agent_id, consult.consult_leg, ctx.call_id):
            _stop(keeper)
            keeper = contact.keep_engaged(ctx.account_id, agent_id, ctx.call_id)
        ctx.publish("agent.accept", self._event(ctx, agentId=agent_id, queueId=str(config.id), waitedSeconds=0,
                                                kind="consult", fromAgentId=consult.from_agent))
        return keeper

    def _first_agent_left(self, ctx: VerbContext, contact: Any, config: "QueueConfig", samples: HandleSamples,
                          consult: Consult) -> None:
        """The first agent left a three-way call: its handle time counts and it goes to wrap-up
        now, as after a completed transfer; an agent target's handle time begins."""
        samples.hand_over(consult.consult_leg if consult.target.kind == "agent" else None)
        contact.call_over(ctx.account_id, config, consult.from_agent)

    @staticmethod
    def _answering(event: Any, offer_id: str, offered: list) -> "Candidate":
        """The agent whose leg answered: the only one, or (ring_all) the one the answered leg
        exported with this offer's id."""
        if len(offered) > 1 and event.variable(OFFER_ID_VARIABLE) == offer_id:
            winner = event.variable(OFFER_AGENT_VARIABLE)
            for candidate, _ in offered:
                if candidate.agent_id == winner:
                    return candidate
        return offered[0][0]

    @staticmethod
    def _ring_lost(ctx: VerbContext, contact: Any, offered: list, winner: "Candidate", keepers: dict) -> None:
        """ring_all: the agents who did not answer first (FreeSWITCH cancelled their legs,
        LOSE_RACE) go back to their idle place at once: no miss, not engaged by this call."""
        for candidate, claimed in offered:
            if candidate.agent_id != winner.agent_id:
                keepers[candidate.agent_id].kill(block=False)
                try:
                    contact.ring_lost(ctx.account_id, claimed)
                except Exception:  # the engaged mark expires by itself; the agent can set available
                    log.exception("agent %s: not put back after a lost ring_all", candidate.agent_id)
