"""An application that breaks in an unexpected way (not a webhook failure, not a hang-up) must
still end the call: the caller is hung up, never left in dead air, and the call is recorded."""
from __future__ import annotations

from sqlalchemy import text

from tests.plugins.eventually import eventually
from tests.plugins.webhook_server import Reply
from tests.session.conftest import call_record, executed, hangups, outbox_keys
from tests.simulator import Call
from tests.simulator.scenario import Timing


def test_given_stored_app_json_that_no_longer_parses_when_call_arrives_then_caller_is_hung_up_and_recorded(
        controller, simulate_call, number_with_app, owner_conn, services):
    # app_json is validated by the API; a row written before a schema change is not.
    account, number, _ = number_with_app(app_json=[{"verb": "no-such-verb"}])

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(10), "simulated call did not finish"

    assert hangups(call), "the controller never hung up the caller"
    record = call_record(owner_conn, call.uuid)
    assert record is not None
    assert record["webhook_error"] == "application_crashed"
    keys = outbox_keys(owner_conn, record["trace_id"])
    assert "call.failed" in keys and keys[-1] == "call.ended"
    assert services.limiter.counts(account.id)[0] == 0
    assert services.live_calls == {}


def test_given_customer_server_not_answering_when_caller_hangs_up_during_first_request_then_call_ends_at_once(
        controller, simulate_call, hook_server, number_with_app, owner_conn, services):
    hook_server.reply(Reply(body=b"[]", delay=30.0))  # 3 attempts of 10 s would outlive the caller
    account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number).hangup_after(0.3), controller)
    assert call.wait(8), "the session kept waiting for the webhook after the caller hung up"

    record = call_record(owner_conn, call.uuid)
    assert record is not None and record["hangup_cause"] == "NORMAL_CLEARING"
    assert outbox_keys(owner_conn, record["trace_id"])[-1] == "call.ended"
    assert services.limiter.counts(account.id)[0] == 0
    assert services.live_calls == {}


def test_given_action_hook_not_answering_when_caller_hangs_up_during_it_then_call_ends_at_once(
        controller, simulate_call, hook_server, number_with_app, owner_conn, services):
    gather = {"verb": "gather", "input": ["dtmf"], "timeout": 1, "numDigits": 1,
              "actionHook": hook_server.url("/action")}
    hook_server.reply(Reply.json([gather]), Reply(body=b"[]", delay=30.0))
    account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number).hangup_after(0.5), controller)
    assert call.wait(8), "the session kept waiting for the actionHook after the caller hung up"

    assert [r.path for r in hook_server.requests] == ["/hook", "/action"]
    record = call_record(owner_conn, call.uuid)
    assert record is not None and record["hangup_cause"] == "NORMAL_CLEARING"
    assert services.limiter.counts(account.id)[0] == 0


def _failure_reasons(owner_conn, call_id: str) -> list[str]:
    return [r[0] for r in owner_conn.execute(text(
        "SELECT body->'payload'->>'reason' FROM event_outbox WHERE routing_key = 'call.failed'"
        " AND body->'payload'->>'callId' = :c"), {"c": call_id})]


def test_given_verb_running_when_freeswitch_drops_the_socket_then_session_ends_with_connection_lost_and_a_record(
        controller, simulate_call, number_with_app, owner_conn, services):
    account, number, _ = number_with_app(app_json=[{"verb": "play", "url": "https://m.example.com/a.wav"}])

    call = simulate_call(Call(callee=number, timing=Timing(playback=60.0)).fault("drop", at=0.3),
                         controller)
    assert call.wait(10), "simulated call did not finish"
    # the simulator is gone at once; let the session finish too
    eventually(lambda: not controller.connections, what="the session finished")
    services.events.flush()

    # a lost socket is not the application's fault, and nothing is left to hang up
    assert _failure_reasons(owner_conn, call.uuid) == ["connection_lost"]
    assert hangups(call) == []
    assert services.limiter.counts(account.id)[0] == 0
    assert services.live_calls == {}
    # FreeSWITCH never reported the hang-up: the record is written from what the session saw
    record = call_record(owner_conn, call.uuid)
    assert record is not None, "a lost socket must not lose the call record"
    assert (record["status"], record["hangup_cause"]) == ("completed", "NORMAL_TEMPORARY_FAILURE")
    assert record["started_at"] <= record["answered_at"] <= record["ended_at"]


def test_given_action_hook_failing_when_gather_completes_then_caller_hears_apology_and_failure_is_recorded(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    gather = {"verb": "gather", "input": ["dtmf"], "timeout": 1, "numDigits": 1,
              "actionHook": hook_server.url("/action")}
    hook_server.reply(Reply.json([gather]), Reply(status=500, body=b"boom"))
    account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(10), "simulated call did not finish"

    assert [r.path for r in hook_server.requests] == ["/hook"] + ["/action"] * 3
    assert any(app == "speak" and "sorry" in arg for app, arg in executed(call))
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == "webhook_failed:http_status"
    assert record["hangup_reason"] == "application_failed"
    assert _failure_reasons(owner_conn, call.uuid) == ["webhook_failed:http_status"]


def test_given_websocket_app_not_acking_when_caller_hangs_up_then_call_ends_and_socket_is_closed(
        controller, simulate_call, ws_server, number_with_app, owner_conn, services):
    ws_server.on_message = lambda peer, message: None  # session:new is never acknowledged
    account, number, _ = number_with_app(call_hook_url=ws_server.url())

    call = simulate_call(Call(callee=number).hangup_after(0.3), controller)
    assert call.wait(8), "the session kept waiting for the WebSocket app after the caller hung up"

    ws_server.wait_for(lambda msgs: any(m.get("type") == "session:new" for m in msgs))
    eventually(lambda: all(peer.closed for peer in ws_server.peers), timeout=5, what="the WebSocket closed")
    assert call_record(owner_conn, call.uuid)["hangup_cause"] == "NORMAL_CLEARING"
    assert services.limiter.counts(account.id)[0] == 0
