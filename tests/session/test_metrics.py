"""Prometheus metrics after simulated calls through the ESL simulator (the production
CallSession, real PostgreSQL/Redis): each value is read from the process registry before and
after, so other tests in the run do not matter."""
from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from app.ops.collectors import QueueCollector
from app.ops.metrics import QUEUE_WAITERS
from app.routing.cache import RoutingCache
from app.routing.dialer import LcrDialer
from tests.plugins.eventually import eventually
from tests.plugins.webhook_server import Reply
from tests.session.conftest import hangups
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan
from tests.simulator import Call


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _wait(call, timeout: float = 10.0) -> None:
    assert call.wait(timeout), "simulated call did not finish"


def test_given_three_answered_calls_when_they_end_then_finished_and_setup_count_three(
        controller, simulate_call, number_with_app):
    _, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hello"}])
    finished = value("sbc_calls_finished_total", status="completed", direction="inbound")
    setups = value("sbc_call_setup_seconds_count")
    calls = [simulate_call(Call(callee=number), controller) for _ in range(3)]
    for call in calls:
        _wait(call)
    # the record is written just after the simulated caller is done
    eventually(lambda: value("sbc_calls_finished_total", status="completed", direction="inbound") >= finished + 3,
               timeout=5, what="three calls counted finished")
    assert value("sbc_calls_finished_total", status="completed", direction="inbound") == finished + 3
    assert value("sbc_call_setup_seconds_count") == setups + 3
    assert value("sbc_call_setup_seconds_bucket", le="+Inf") >= setups + 3
    assert value("sbc_call_setup_seconds_sum") > 0


def test_given_a_held_call_then_it_is_in_progress_until_it_ends(controller, simulate_call, number_with_app):
    _, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 30}])
    before = value("sbc_calls_in_progress", direction="inbound")
    call = simulate_call(Call(callee=number).hangup_after(1.0), controller)
    eventually(lambda: value("sbc_calls_in_progress", direction="inbound") == before + 1, timeout=5,
               what="the held call in progress")
    _wait(call)
    eventually(lambda: value("sbc_calls_in_progress", direction="inbound") == before, timeout=5,
               what="the ended call no longer in progress")


def test_given_an_account_at_its_limit_then_the_refusal_is_counted_by_scope_and_recorded_refused(
        controller, simulate_call, number_with_app):
    _, number, _ = number_with_app(max_concurrent_calls=1, app_json=[{"verb": "pause", "length": 30}])
    refusals = value("sbc_limiter_refusals_total", scope="account")
    refused_records = value("sbc_calls_finished_total", status="refused", direction="inbound")
    held = simulate_call(Call(callee=number).hangup_after(1.0), controller)
    eventually(lambda: value("sbc_calls_in_progress", direction="inbound") >= 1, timeout=5,
               what="the held call taking the account's one slot")
    refused = simulate_call(Call(callee=number), controller)
    _wait(refused)
    assert hangups(refused) == ["NORMAL_CIRCUIT_CONGESTION"]
    assert value("sbc_limiter_refusals_total", scope="account") == refusals + 1
    eventually(lambda: value("sbc_calls_finished_total", status="refused", direction="inbound") >= refused_records + 1,
               timeout=5, what="the refused call recorded")
    assert value("sbc_calls_finished_total", status="refused", direction="inbound") == refused_records + 1
    _wait(held)


def test_given_webhook_calls_then_attempt_outcomes_and_latency_are_counted(
        controller, simulate_call, hook_server, number_with_app):
    hook_server.reply(Reply.json([{"verb": "hangup"}]))
    _, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))
    ok = value("sbc_webhook_attempts_total", purpose="hook", outcome="ok")
    observed = value("sbc_webhook_request_seconds_count", purpose="hook")
    _wait(simulate_call(Call(callee=number), controller))
    assert value("sbc_webhook_attempts_total", purpose="hook", outcome="ok") == ok + 1
    assert value("sbc_webhook_request_seconds_count", purpose="hook") == observed + 1

    hook_server.reply(Reply(status=500, body=b"no"), Reply(status=500, body=b"no"), Reply(status=500, body=b"no"))
    failed = value("sbc_webhook_attempts_total", purpose="hook", outcome="http_status")
    _wait(simulate_call(Call(callee=number), controller), timeout=20)
    assert value("sbc_webhook_attempts_total", purpose="hook", outcome="http_status") == failed + 3


def test_given_a_queue_caller_then_waiting_and_longest_wait_are_exposed(controller, simulate_call, number_with_app):
    _, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support", "timeout": 30,
                                              "announcePosition": False}])
    waiting_before, _ = QUEUE_WAITERS.snapshot()
    call = simulate_call(Call(callee=number).hangup_after(1.2), controller)
    # the caller waits in the queue (it hangs up at 1.2 s) until it has waited 0.4 s
    eventually(lambda: QUEUE_WAITERS.snapshot()[0] == waiting_before + 1 and QUEUE_WAITERS.snapshot()[1] >= 0.4,
               timeout=5, what="the caller waiting 0.4 s in the queue")
    registry = CollectorRegistry()  # as the controller registers it (Controller.start)
    registry.register(QueueCollector())
    text = generate_latest(registry).decode()
    waiting, longest = QUEUE_WAITERS.snapshot()
    assert waiting == waiting_before + 1 and longest >= 0.4
    assert f"sbc_queue_waiting_calls {float(waiting)}" in text
    _wait(call)
    eventually(lambda: QUEUE_WAITERS.snapshot()[0] == waiting_before, timeout=5, what="the caller left the queue")


def test_given_lcr_lookups_then_routed_and_missed_decisions_are_counted(make_account):
    account = make_account()
    two_carrier_plan(account.id)
    dialer = LcrDialer(RoutingCache())
    # "not-a-number" can match no plan (not even a platform catch-all another test may leave)
    for number, expected in ((GERMAN_NUMBER, "routed"), ("not-a-number", "no_route")):
        before = {r: value("sbc_lcr_decisions_total", result=r) for r in ("routed", "no_route")}
        dialer.explain(number, account.id)
        after = {r: value("sbc_lcr_decisions_total", result=r) for r in ("routed", "no_route")}
        assert after == {**before, expected: before[expected] + 1}
