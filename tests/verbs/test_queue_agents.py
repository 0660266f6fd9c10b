"""The queue verb reaching agents (docs/agents.md): a configured queue by name, the atomic
claim of the longest-idle registered agent, the agent's leg bridged from the caller's leg,
offer → accept / missed → next agent, N misses → not_ready, wrap_up → available. Real
PostgreSQL (agents, queues, outbox) and Redis, the simulator as FreeSWITCH."""
from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import gevent

from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.settings import get_settings
from app.verbs.hold_music import MIN_PLAY_SECONDS
from tests.plugins.eventually import eventually
from tests.simulator import Call, Timing

MOH_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "moh" / "tone-660hz-16k-stereo.wav"


def _keys(run, owner_conn, expect: int) -> list[str]:
    return [k for k, _ in run.events(owner_conn, expect)]


def test_given_two_idle_agents_when_a_caller_queues_then_the_longest_idle_is_bridged_and_goes_wrap_up_then_available(
        run_on_call, centre, owner_conn, owner_engine):
    first = centre.agents[0]
    run = run_on_call(Call().bridge_answers(talk=0.3), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.error is None, run.error
    assert run.outcome.reason == "queue_answered" and run.outcome.data["agentId"] == str(first.id)
    (bridge,) = run.bridges()
    assert bridge.endswith(f"user/{first.sip_username}@{centre.subdomain}") and "leg_timeout=5" in bridge
    # offered at once: the verb answers the caller first (no media ran yet to answer it)
    assert [app for app, _ in run.apps()][-2:] == ["uuid_answer", "bridge"]
    keys = _keys(run, owner_conn, 5)
    assert [k for k in keys if not k.startswith("interaction.")] == [
        "queue.caller.enqueued", "queue.assignment", "agent.offer", "agent.accept", "queue.caller.dequeued"]
    assert run.ctx.queue_id == centre.queue_id and run.ctx.agent_id == str(first.id)
    assert centre.agent_row(owner_engine, first) == ("wrap_up", "after_call_work")
    assert str(first.id) not in centre.presence.idle_agents(centre.account_id)
    eventually(lambda: centre.agent_row(owner_engine, first)[0] == "available", timeout=5, interval=0.1,
               what="the agent available after wrap-up")
    assert centre.agent_row(owner_engine, first) == ("available", None)
    assert str(first.id) in centre.presence.idle_agents(centre.account_id)


def test_given_an_agent_claimed_at_once_then_the_music_plays_its_minimum_and_one_break_ends_it_before_the_bridge(
        run_on_call, centre):
    """The queue row has no announcements: the music is queued first and the claim succeeds
    at once. The music is not broken before MIN_PLAY_SECONDS (a timer-paced playback ended
    before its FreeSWITCH service thread runs leaves that thread looping for ever and the
    channel unable to end: app/verbs/hold_music.py); by then it has started, so one break ends
    it and the bridge follows within a tick."""
    run = run_on_call(Call(timing=Timing(media_tick=0.02, playback=5.0)).bridge_answers(talk=0.1),
                      [{"verb": "queue", "name": "support"}], account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_answered", run.error
    sent = [c for c in run.call.commands if c.name == "sendmsg" and c.app in ("playback", "bridge")]
    assert [c.app for c in sent] == ["playback", "bridge"]
    breaks = [c for c in run.call.commands if c.line.startswith("api uuid_break")]
    assert len(breaks) == 1
    assert breaks[0].at - sent[0].at >= MIN_PLAY_SECONDS
    assert sent[1].at - breaks[0].at < 0.15, sent[1].at - breaks[0].at


def test_given_an_agent_offered_when_the_queue_music_stops_then_what_the_caller_hears_next_is_not_timer_paced(
        run_on_call, centre):
    """The wait's music is paced by a timer (timer_name=soft); the timer goes when the music
    stops, before the bridge, so an agent's hold music or an attended transfer's hold is a
    plain playback: a timer-paced one starts a FreeSWITCH service thread, and one of those
    spinning after its playback kept a caller's channel from ever ending (app/verbs/hold_music.py)."""
    run = run_on_call(Call().bridge_answers(talk=0.1), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_answered", run.error
    assert [v for n, v in run.setvars() if n == "timer_name"] == ["soft", ""]
    lines = [c.line for c in run.call.commands]
    unset = next(i for i, line in enumerate(lines) if line.startswith("api uuid_setvar") and line.split()[-1] == "timer_name")
    bridge = next(i for i, c in enumerate(run.call.commands) if c.name == "sendmsg" and c.app == "bridge")
    assert unset < bridge


def test_given_a_queue_with_uploaded_music_when_an_agent_is_offered_then_the_agents_leg_holds_with_that_music(
        run_on_call, centre, tmp_path):
    """An agent's hold (``uuid_hold`` on the agent's leg, or the phone's re-INVITE) plays the
    holding leg's ``hold_music`` to the caller: the offer sets it to the music the caller
    waited with (here the account's upload), on every leg of a ring_all offer too."""
    from app.media import moh_uploads
    from app.media.moh import MusicLibrary

    moh_uploads.store(str(tmp_path), centre.account_id, "lobby", MOH_FIXTURE.read_bytes())
    library = MusicLibrary(str(tmp_path))
    uploaded = str(tmp_path / centre.account_id / "lobby.wav")
    run = run_on_call(Call().bridge_answers(talk=0.1), [{"verb": "queue", "name": "support", "moh": "lobby"}],
                      account_id=centre.account_id, contact=centre.contact, music=library.source)
    assert run.outcome.reason == "queue_answered", run.error
    (bridge,) = run.bridges()
    head = bridge[1:bridge.index("}")].split(",")
    assert f"hold_music={uploaded}" in head, bridge
    assert ("playback", uploaded) in run.apps()  # the music the caller waited with
    assert ("transfer_ringback", uploaded) in run.setvars()


def test_given_the_first_agent_does_not_answer_when_the_offer_times_out_then_agent_missed_and_the_next_agent_is_bridged(
        run_on_call, centre, owner_conn, owner_engine):
    first, second = centre.agents
    run = run_on_call(Call().bridge_fails("NO_ANSWER", "480").bridge_answers(talk=0.1),
                      [{"verb": "queue", "name": "support"}], account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_answered" and run.outcome.data["agentId"] == str(second.id)
    bridges = run.bridges()
    assert [b.rsplit("user/", 1)[1].split("@")[0] for b in bridges] == [first.sip_username, second.sip_username]
    events = [(k, p) for k, p in run.events(owner_conn, 8) if not k.startswith("interaction.")]
    keys = [k for k, _ in events]
    assert keys[:6] == ["queue.caller.enqueued", "queue.assignment", "agent.offer", "agent.missed",
                        "queue.assignment", "agent.offer"]
    accepts = [p["payload"]["agentId"] for k, p in events if k == "agent.accept"]
    assert accepts == [str(second.id)]  # the first offer's bridge handler is over
    missed = next(p for k, p in events if k == "agent.missed")
    assert missed["payload"]["agentId"] == str(first.id) and missed["payload"]["cause"] == "NO_ANSWER"
    assert centre.agent_row(owner_engine, first) == ("available", None)  # one miss of 2 allowed


def test_given_an_agent_that_misses_the_queue_limit_in_a_row_then_it_goes_not_ready_reason_missed(
        run_on_call, centre, owner_engine):
    first, second = centre.agents
    centre.presence.agent_busy(centre.account_id, str(second.id))
    run = run_on_call(Call().bridge_fails("NO_ANSWER", "480").bridge_fails("NO_ANSWER", "480"),
                      [{"verb": "queue", "name": "support", "timeout": 3}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_timeout"
    assert len(run.bridges()) == 2
    assert centre.agent_row(owner_engine, first) == ("not_ready", "missed")
    assert str(first.id) not in centre.presence.idle_agents(centre.account_id)


def test_given_available_agents_that_are_not_registered_when_a_caller_queues_then_no_one_is_offered(
        run_on_call, centre):
    for agent in centre.agents:
        centre.presence.unregistered(centre.subdomain, agent.sip_username)
    run = run_on_call(Call(), [{"verb": "queue", "name": "support", "timeout": 2}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_timeout" and run.bridges() == []


def test_given_an_agent_registered_on_another_switch_then_it_is_not_offered_a_caller_on_this_one(
        run_on_call, centre):
    first, second = centre.agents
    centre.presence.registered(centre.subdomain, first.sip_username, 60, node="another-switch-core-uuid")
    run = run_on_call(Call().bridge_answers(talk=0.1), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.data["agentId"] == str(second.id)
    assert run.bridges()[0].endswith(f"user/{second.sip_username}@{centre.subdomain}")


def test_given_an_unknown_queue_name_when_queued_then_the_call_ends_queue_not_found(run_on_call, centre):
    run = run_on_call(Call(), [{"verb": "queue", "name": "nope"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_not_found" and run.bridges() == []


def test_given_a_caller_who_hangs_up_mid_talk_then_the_agent_is_released_into_wrap_up(
        run_on_call, centre, owner_engine, owner_conn):
    first = centre.agents[0]
    run = run_on_call(Call().bridge_answers(talk=5).hangup_after(0.5), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.error is not None  # ChannelHungUp: the caller left
    keys = [k for k, _ in run.events(owner_conn, 5) if k.startswith("queue.caller.")]
    assert keys == ["queue.caller.enqueued", "queue.caller.dequeued"]  # answered, not abandoned
    # answered, then the caller hung up mid-talk: the agent is in after-call work, engaged no more
    assert centre.presence.engaged_by(centre.account_id, str(first.id)) is None
    assert centre.agent_row(owner_engine, first)[0] == "wrap_up"


def test_given_two_controllers_racing_for_the_same_callers_and_agents_then_each_is_assigned_exactly_once(
        redis_client):
    """50 callers and 20 agents, every caller claiming from two Presence instances (two
    connections, as two controllers would) at once: no agent twice, no caller twice."""
    import redis as redis_lib

    prefix = get_settings().redis_key_prefix
    account = str(uuid.uuid4())
    controllers = [Presence(redis_lib.Redis.from_url(get_settings().redis_url), prefix) for _ in range(2)]
    from app.contact.presence import Candidate

    members = [Candidate(str(uuid.uuid4()), "race", f"ag{n}") for n in range(20)]
    for n, member in enumerate(members):
        controllers[0].registered("race", member.sip_username, 60)
        controllers[0].agent_idle(account, member.agent_id, since_ms=1000 + n)
    callers = [f"call-{n}" for n in range(50)]
    for n, call in enumerate(callers):
        controllers[0].join(account, "q", call, enqueued_ms=5000 + n)
    won: list[tuple[str, str]] = []

    def contend(presence: Presence) -> None:
        for _ in range(200):
            for call in callers:
                agent = presence.claim(account, "q", call, members)
                if agent:
                    won.append((call, agent))
            gevent.sleep(0)

    gevent.joinall([gevent.spawn(contend, p) for p in controllers])
    assert len(won) == 20
    assert len({a for _, a in won}) == 20 and len({c for c, _ in won}) == 20
    # first in line first, longest idle first: the k-th caller got the k-th longest idle agent
    # (the order replies reach the greenlets may differ from the order Redis ran the claims)
    assert dict(won) == dict(zip(callers[:20], (m.agent_id for m in members)))


def test_given_a_dial_with_a_queue_target_then_the_configured_queue_offers_the_caller_to_an_agent(
        run_on_call, centre):
    run = run_on_call(Call().bridge_answers(talk=0.1),
                      [{"verb": "dial", "target": [{"type": "queue", "name": "support"}]}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_answered" and run.outcome.data["agentId"] == str(centre.agents[0].id)


def test_given_a_configured_queue_then_its_settings_apply_unless_the_verb_names_them(run_on_call, centre):
    """The queue row says moh 'default' and no announcements; the verb's own moh wins."""
    for agent in centre.agents:
        centre.presence.agent_busy(centre.account_id, str(agent.id))
    run = run_on_call(Call(), [{"verb": "queue", "name": "support", "moh": "jazz", "timeout": 4}],
                      account_id=centre.account_id, contact=centre.contact)
    apps = run.apps()
    assert ("playback", "local_stream://jazz") in apps
    assert not [a for a in apps if a[0] == "speak"]  # announce_position false on the queue


def test_given_a_claimed_agent_then_its_engaged_mark_expires_unless_the_call_keeps_it(centre, redis_client):
    """A controller that dies mid-call must not leave the agent un-offerable for ever."""
    from app.contact.presence import ENGAGED_TTL_SECONDS

    first = centre.agents[0]
    centre.presence.join(centre.account_id, "support", "call-a")
    members = [c for c in centre.contact.queue(centre.account_id, "support").members]
    assert centre.presence.claim(centre.account_id, "support", "call-a", members) == str(first.id)
    key = centre.presence.engaged_prefix(centre.account_id) + str(first.id)
    assert 0 < redis_client.ttl(key) <= ENGAGED_TTL_SECONDS
    assert centre.presence.keep_engaged(centre.account_id, str(first.id), "another-call") is False
    redis_client.expire(key, 5)
    assert centre.presence.keep_engaged(centre.account_id, str(first.id), "call-a") is True
    assert redis_client.ttl(key) > 5
    assert centre.presence.agent_idle(centre.account_id, str(first.id)) is False  # engaged
    centre.presence.release(centre.account_id, str(first.id))
    assert centre.presence.agent_idle(centre.account_id, str(first.id)) is True


def test_given_an_agent_phone_that_declines_the_offer_then_agent_reject_not_a_miss_and_the_next_agent_is_bridged(
        run_on_call, centre, owner_conn, owner_engine):
    first, second = centre.agents
    run = run_on_call(Call().bridge_fails("CALL_REJECTED", "603").bridge_answers(talk=0.1),
                      [{"verb": "queue", "name": "support"}], account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_answered" and run.outcome.data["agentId"] == str(second.id)
    events = [(k, p["payload"]) for k, p in run.events(owner_conn, 8) if k.startswith("agent.")]
    assert [(k, p["agentId"]) for k, p in events] == [
        ("agent.offer", str(first.id)), ("agent.reject", str(first.id)),
        ("agent.offer", str(second.id)), ("agent.accept", str(second.id))]
    assert int(centre.presence.redis.get(f"{centre.presence.prefix}cc:{centre.account_id}:misses:{first.id}") or 0) == 0
    assert centre.agent_row(owner_engine, first) == ("available", None)


def test_given_a_waiting_caller_when_an_agent_joins_the_queue_later_then_the_caller_is_offered_to_it(
        run_on_call, centre, monkeypatch):
    """Members are re-read while the caller waits (QUEUE_MEMBERS_REFRESH_SECONDS, shortened
    here); a database error during a re-read keeps the members it had."""
    import app.verbs.queue as queue_verb

    monkeypatch.setattr(queue_verb, "QUEUE_MEMBERS_REFRESH_SECONDS", 0.5)
    full = centre.contact.queue(centre.account_id, "support")
    reads = {"n": 0}

    def loader(account_id: str, name: str):
        reads["n"] += 1
        if reads["n"] == 1:  # at join: nobody is a member yet
            return dataclasses.replace(full, members=())
        if reads["n"] == 2:
            raise ConnectionError("database away")
        return full

    contact = ContactCentre(centre.presence, loader=loader)
    run = run_on_call(Call().bridge_answers(talk=0.1), [{"verb": "queue", "name": "support", "timeout": 10}],
                      account_id=centre.account_id, contact=contact)
    assert run.outcome.reason == "queue_answered" and reads["n"] >= 3


def test_given_an_offer_cancelled_by_the_callers_own_leg_then_it_is_neither_missed_nor_rejected(
        run_on_call, centre, owner_conn):
    first = centre.agents[0]
    run = run_on_call(Call().bridge_fails("ORIGINATOR_CANCEL", "487").bridge_answers(talk=0.1),
                      [{"verb": "queue", "name": "support"}], account_id=centre.account_id, contact=centre.contact)
    keys = [k for k, _ in run.events(owner_conn, 6) if k.startswith("agent.")]
    assert "agent.missed" not in keys and "agent.reject" not in keys, keys
    assert int(centre.presence.redis.get(f"{centre.presence.prefix}cc:{centre.account_id}:misses:{first.id}") or 0) == 0
