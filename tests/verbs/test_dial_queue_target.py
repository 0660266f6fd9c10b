"""``dial`` tries its targets in order (SPEC "dial": "tried in order"), a queue target included:
the targets before it are bridged with failover, and when none answers the caller waits in the
queue. A queue target ends the list like the ``queue`` verb, so a target after it is refused
at validation (it could never be tried)."""
from __future__ import annotations

import pytest

from app.verbs import VerbListRejected, parse_verb_list
from app.verbs.dial import QUEUE_TARGET_NOT_LAST
from tests.simulator import Call


def test_given_a_user_then_a_queue_when_the_user_does_not_answer_then_the_caller_is_queued_and_an_agent_answers(
        run_on_call, centre, owner_conn):
    direct, queued = centre.agents[1], centre.agents[0]
    run = run_on_call(Call().bridge_fails("NO_ANSWER", "480").bridge_answers(talk=0.1),
                      [{"verb": "dial", "timeout": 5, "target": [
                          {"type": "user", "name": direct.sip_username},
                          {"type": "queue", "name": "support"}]}],
                      account_id=centre.account_id, contact=centre.contact)

    assert run.error is None
    first, second = run.bridges()
    assert first.endswith(f"}}user/{direct.sip_username}@{centre.subdomain}")  # the user first
    assert f"user/{queued.sip_username}@{centre.subdomain}" in second  # then the queue's offer
    assert run.outcome.reason == "queue_answered" and run.outcome.data["agentId"] == str(queued.id)
    keys = [k for k, _ in run.events(owner_conn, 3)]
    assert "queue.caller.enqueued" in keys


def test_given_a_user_then_a_queue_when_the_user_answers_then_the_caller_never_joins_the_queue(
        run_on_call, centre, owner_conn):
    run = run_on_call(Call().bridge_answers(talk=0.05),
                      [{"verb": "dial", "target": [
                          {"type": "user", "name": centre.agents[1].sip_username},
                          {"type": "queue", "name": "support"}]}],
                      account_id=centre.account_id, contact=centre.contact)

    assert run.outcome.reason == "dial_completed" and len(run.bridges()) == 1
    assert not [k for k, _ in run.events(owner_conn, 1) if k.startswith("queue.")]


def test_given_only_unknown_users_before_a_queue_then_the_caller_goes_straight_to_the_queue(run_on_call, centre):
    run = run_on_call(Call().bridge_answers(talk=0.05),
                      [{"verb": "dial", "target": [{"type": "user", "name": "nobody"},
                                                   {"type": "queue", "name": "support"}]}],
                      account_id=centre.account_id, contact=centre.contact)

    assert run.outcome.reason == "queue_answered"
    [offer] = run.bridges()
    assert f"user/{centre.agents[0].sip_username}@" in offer


@pytest.mark.parametrize("targets", [
    [{"type": "queue", "name": "support"}, {"type": "user", "name": "alice"}],
    [{"type": "user", "name": "alice"}, {"type": "queue", "name": "a"}, {"type": "queue", "name": "b"}],
])
def test_given_a_target_after_a_queue_target_when_parsed_then_refused_as_never_tried(targets):
    with pytest.raises(VerbListRejected) as caught:
        parse_verb_list([{"verb": "dial", "target": targets}])
    [error] = caught.value.errors
    assert error["field"] == "target" and error["message"] == QUEUE_TARGET_NOT_LAST


def test_given_a_queue_target_last_after_other_targets_when_parsed_then_accepted():
    (dial,) = parse_verb_list([{"verb": "dial", "target": [
        {"type": "user", "name": "alice"}, {"type": "phone", "name": "+15551230000"},
        {"type": "queue", "name": "support"}]}])
    assert [t["type"] for t in dial.params["target"]] == ["user", "phone", "queue"]
