"""The queue verb with the queue's strategy, caller priority, EWT announcements and
short-abandon (docs/agents.md "Strategies", docs/verbs.md "queue"), through the ESL simulator
with real PostgreSQL and Redis."""
from __future__ import annotations

from sqlalchemy import text

from app.contact.queue_stats import QueueStats
from app.settings import get_settings
from tests.simulator import Call


def _set_strategy(owner_engine, centre, strategy: str, **columns: int) -> None:
    sets = ", ".join(["strategy = :s", *(f"{k} = :{k}" for k in columns)])
    with owner_engine.begin() as conn:
        conn.execute(text(f"UPDATE queues SET {sets} WHERE id = :q"), {"s": strategy, "q": centre.queue_id, **columns})


def _payloads(run, owner_conn, expect: int, key: str) -> list[dict]:
    return [p["payload"] for k, p in run.events(owner_conn, expect) if k == key]


def test_given_ring_all_when_the_second_agent_answers_then_both_rang_at_once_and_the_first_is_not_missed(
        run_on_call, centre, owner_conn, owner_engine):
    _set_strategy(owner_engine, centre, "ring_all")
    first, second = centre.agents
    first_idle_since = centre.presence.redis.zscore(centre.presence.idle_key(centre.account_id), str(first.id))
    run = run_on_call(Call().bridge_answers(talk=0.2, leg=1), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.error is None, run.error
    assert run.outcome.reason == "queue_answered" and run.outcome.data["agentId"] == str(second.id)
    assert centre.agent_row(owner_engine, second)[0] == "wrap_up"  # the winner's after-call work
    (bridge,) = run.bridges()
    legs = bridge.split("}", 1)[1].split("]user/")
    assert len(legs) == 3 and ",[" in bridge  # one bridge, two legs rung at once (',')
    assert f"user/{first.sip_username}@{centre.subdomain},[" in bridge
    assert bridge.endswith(f"user/{second.sip_username}@{centre.subdomain}")
    events = [(k, p["payload"]) for k, p in run.events(owner_conn, 7) if not k.startswith("interaction.")]
    keys = [k for k, _ in events]
    assert keys.count("agent.offer") == 2 and keys.count("queue.assignment") == 2
    assert [p["agentId"] for k, p in events if k == "agent.accept"] == [str(second.id)]
    assert "agent.missed" not in keys and "agent.reject" not in keys
    assert run.ctx.agent_id == str(second.id)
    # the loser is idle again at its old place, engaged no more; the winner went to wrap-up
    assert centre.presence.engaged_by(centre.account_id, str(first.id)) is None
    assert centre.presence.redis.zscore(centre.presence.idle_key(centre.account_id), str(first.id)) == first_idle_since
    assert centre.agent_row(owner_engine, first) == ("available", None)


def test_given_ring_all_when_no_agent_answers_then_each_rang_out_agent_is_missed(
        run_on_call, centre, owner_conn, owner_engine):
    _set_strategy(owner_engine, centre, "ring_all")
    run = run_on_call(Call().bridge_fails("NO_ANSWER", "480").bridge_answers(talk=0.1, leg=0),
                      [{"verb": "queue", "name": "support"}], account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_answered"
    missed = _payloads(run, owner_conn, 12, "agent.missed")
    assert sorted(p["agentId"] for p in missed) == sorted(str(a.id) for a in centre.agents)


def test_given_round_robin_then_the_verb_offers_the_agent_after_the_last_one_offered(
        run_on_call, centre, owner_engine):
    _set_strategy(owner_engine, centre, "round_robin")
    ordered = sorted(centre.agents, key=lambda a: str(a.id))
    centre.presence.redis.set(centre.presence.pointer_key(centre.account_id, "support"), str(ordered[0].id))
    run = run_on_call(Call().bridge_answers(talk=0.05), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.data["agentId"] == str(ordered[1].id)


def test_given_a_priority_caller_when_queued_behind_others_then_it_is_first_in_line(
        run_on_call, centre, owner_conn):
    for agent in centre.agents:
        centre.presence.agent_busy(centre.account_id, str(agent.id))
    for n in range(2):
        centre.presence.join(centre.account_id, "support", f"earlier-{n}")
    run = run_on_call(Call(), [{"verb": "queue", "name": "support", "priority": 5, "timeout": 1}],
                      account_id=centre.account_id, contact=centre.contact)
    (enqueued,) = _payloads(run, owner_conn, 2, "queue.caller.enqueued")
    assert enqueued["position"] == 1


def test_given_handle_times_when_the_position_is_announced_then_the_estimated_wait_follows(
        run_on_call, centre):
    for agent in centre.agents:
        centre.presence.agent_busy(centre.account_id, str(agent.id))
    centre.presence.join(centre.account_id, "support", "earlier-0")
    stats = QueueStats(centre.presence.redis, get_settings().redis_key_prefix)
    for n in range(3):  # 4 minutes each, two agents registered: caller 2 waits ~4 minutes
        stats.handled(centre.account_id, "support", f"old-{n}", 240_000)
    run = run_on_call(Call(), [{"verb": "queue", "name": "support", "announcePosition": True, "timeout": 6}],
                      account_id=centre.account_id, contact=centre.contact)
    spoken = [arg for app, arg in run.apps() if app == "speak"]
    assert spoken and spoken[0].endswith("You are caller number 2. Your estimated wait is about 4 minutes")


def test_given_no_handle_times_when_the_position_is_announced_then_no_estimate_is_given(run_on_call, centre):
    for agent in centre.agents:
        centre.presence.agent_busy(centre.account_id, str(agent.id))
    run = run_on_call(Call(), [{"verb": "queue", "name": "support", "announcePosition": True, "timeout": 6}],
                      account_id=centre.account_id, contact=centre.contact)
    spoken = [arg for app, arg in run.apps() if app == "speak"]
    assert spoken and spoken[0].endswith("You are caller number 1")


def test_given_a_caller_who_hangs_up_before_the_short_abandon_threshold_then_the_abandon_is_short(
        run_on_call, centre, owner_conn, owner_engine):
    _set_strategy(owner_engine, centre, "longest_idle", short_abandon_seconds=30)
    for agent in centre.agents:
        centre.presence.agent_busy(centre.account_id, str(agent.id))
    run = run_on_call(Call().hangup_after(0.5), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    (abandoned,) = _payloads(run, owner_conn, 2, "queue.caller.abandoned")
    assert abandoned["shortAbandon"] is True and abandoned["reason"] == "hangup"


def test_given_a_caller_who_hangs_up_after_the_short_abandon_threshold_then_the_abandon_is_not_short(
        run_on_call, centre, owner_conn, owner_engine):
    _set_strategy(owner_engine, centre, "longest_idle", short_abandon_seconds=1)
    for agent in centre.agents:
        centre.presence.agent_busy(centre.account_id, str(agent.id))
    run = run_on_call(Call().hangup_after(1.5), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    (abandoned,) = _payloads(run, owner_conn, 2, "queue.caller.abandoned")
    assert abandoned["shortAbandon"] is False


def test_given_an_answered_queue_call_then_its_wait_and_handle_time_feed_the_queue_figures(
        run_on_call, centre):
    run = run_on_call(Call().bridge_answers(talk=0.3), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.reason == "queue_answered"
    stats = QueueStats(centre.presence.redis, get_settings().redis_key_prefix)
    level = stats.service_level(centre.account_id, "support", 20)
    assert (level.answered, level.within_target, level.percent) == (1, 1, 100.0)
    assert stats.mean_handle_ms(centre.account_id, "support") >= 200


def test_given_fewest_calls_then_an_answered_call_counts_for_the_agent_today(run_on_call, centre, owner_engine):
    _set_strategy(owner_engine, centre, "fewest_calls")
    first, second = centre.agents
    centre.presence.count_handled(centre.account_id, str(first.id))
    run = run_on_call(Call().bridge_answers(talk=0.05), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.data["agentId"] == str(second.id)
    assert centre.presence.handled_today(centre.account_id, str(second.id)) == 1


def test_given_a_priority_out_of_range_or_not_an_integer_then_the_verb_is_invalid():
    from marshmallow import ValidationError

    from app.verbs.queue import Queue

    assert Queue.schema().load({"verb": "queue", "name": "q", "priority": 100})["priority"] == 100
    assert Queue.schema().load({"verb": "queue", "name": "q"})["priority"] == 0
    for bad in (101, -1, "1", 1.5, True):
        try:
            Queue.schema().load({"verb": "queue", "name": "q", "priority": bad})
        except ValidationError as exc:
            assert "priority" in exc.messages
        else:
            raise AssertionError(f"priority {bad!r} accepted")
