"""What the queue verb stamps for the interaction summary (ctx.interaction): join, the accepted
offer, the agent's answer, leaving the line and how; and the segment it opens when the agent
answers. The simulator as FreeSWITCH, real PostgreSQL and Redis."""
from __future__ import annotations

from sqlalchemy import text

from tests.simulator import Call


def test_given_an_agent_who_answers_then_join_offer_answer_and_leave_are_stamped_in_order_and_a_segment_opens(
        run_on_call, centre, owner_conn):  # noqa: F811
    first = centre.agents[0]
    run = run_on_call(Call().bridge_answers(talk=0.3), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.error is None, run.error
    t = run.ctx.interaction
    assert t.queue_joined_at <= t.offered_at <= t.connected_at <= t.queue_left_at
    assert t.queue_result == "answered" and t.short_abandon_seconds == 5
    segment = owner_conn.execute(text("SELECT * FROM interaction_segment WHERE id = :i"),
                                 {"i": t.segment_id}).mappings().one()
    assert (str(segment["agent_id"]), str(segment["call_id"]), str(segment["trace_id"])) == \
        (str(first.id), run.ctx.call_id, run.trace_id)
    assert segment["started_at"] == t.connected_at and segment["ended_at"] is None  # closed by the record


def test_given_no_agent_before_the_timeout_then_the_result_is_timeout_and_nothing_is_offered(run_on_call, centre):  # noqa: F811
    for agent in centre.agents:
        centre.presence.agent_busy(centre.account_id, str(agent.id))
    run = run_on_call(Call(), [{"verb": "queue", "name": "support", "timeout": 1}],
                      account_id=centre.account_id, contact=centre.contact)
    t = run.ctx.interaction
    assert t.queue_result == "timeout" and t.queue_joined_at < t.queue_left_at
    assert (t.offered_at, t.connected_at, t.segment_id) == (None, None, None)
