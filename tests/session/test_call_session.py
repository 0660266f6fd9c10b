"""Calls through the controller's session, as FreeSWITCH would hand them over."""
from __future__ import annotations

import hashlib
import hmac
import json

from sqlalchemy import text

from tests.plugins.eventually import eventually
from tests.plugins.webhook_server import Reply
from tests.session.conftest import call_record, executed, hangups, outbox_keys
from tests.simulator import Call

SAY_PLAY_HANGUP = [
    {"verb": "say", "text": "Hello caller"},
    {"verb": "play", "url": "https://media.example.com/a.wav"},
    {"verb": "tag", "data": {"crm": "42"}},
    {"verb": "hangup", "reason": "done talking"},
]


def _wait(call, timeout: float = 10.0) -> None:
    assert call.wait(timeout), "simulated call did not finish"


def test_given_webhook_app_when_call_arrives_then_verbs_run_and_call_record_is_written(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    hook_server.reply(Reply.json(SAY_PLAY_HANGUP))
    status_hook = hook_server.url("/status")
    account, number, app_id = number_with_app(call_hook_url=hook_server.url("/hook"),
                                              call_status_hook_url=status_hook, secret="s3cr3t-key")

    call = simulate_call(Call(caller="+1 555 123 0000", callee=number), controller)
    _wait(call)

    first = hook_server.requests[0]
    body = json.loads(first.body)
    assert body == {"callId": call.uuid, "traceId": body["traceId"], "accountSid": str(account.id),
                    "applicationSid": str(app_id), "from": "15551230000", "to": number,
                    "direction": "inbound", "callStatus": "ringing"}
    expected = hmac.new(b"s3cr3t-key", first.body, hashlib.sha256).hexdigest()
    assert first.headers["x-signature"] == expected
    assert first.headers["user-agent"] == "SaaS-SBC/1.0"

    apps = [a for a, _ in executed(call)]
    assert apps[:3] == ["uuid_answer", "speak", "playback"]
    assert executed(call)[1][1] == "flite|kal|Hello caller"
    assert hangups(call) == ["NORMAL_CLEARING"]

    record = call_record(owner_conn, call.uuid)
    assert record is not None
    assert str(record["trace_id"]) == body["traceId"]
    assert record["account_id"] == account.id
    assert record["status"] == "completed"
    assert record["hangup_reason"] == "done talking"
    assert record["tags"] == {"crm": "42"}
    assert record["has_webhook"] is True
    assert record["from_number"] == "15551230000"
    assert record["journey"] == "webhook > say > play > tag > hangup"
    keys = outbox_keys(owner_conn, body["traceId"])
    assert keys[:3] == ["call.started", "call.ringing", "interaction.say"]
    assert [k for k in keys if k.startswith("interaction.")] == [
        "interaction.say", "interaction.play", "interaction.tag", "interaction.hangup"]
    assert keys.index("call.answered") < keys.index("interaction.play")
    assert keys[-1] == "call.ended"

    def finals_sent() -> list[dict]:  # the status hook is fire-and-forget: after the record
        finals = [json.loads(r.body) for r in hook_server.requests if r.path == "/status"]
        return finals if finals and finals[-1]["callStatus"] == "completed" else []

    finals = eventually(finals_sent, timeout=5, what="the completed status hook")
    assert [f["callStatus"] for f in finals] == ["in-progress", "completed"]
    assert finals[-1]["callRecordSid"] == str(record["public_id"])
    assert finals[-1]["hangupReason"] == "done talking"


def test_given_app_json_only_when_call_arrives_then_static_verbs_run_without_any_request(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 1}])
    call = simulate_call(Call(callee=number), controller)
    _wait(call)
    assert executed(call)[:2] == [("uuid_answer", ""), ("sleep", "1000")]
    assert hook_server.requests == []
    assert call_record(owner_conn, call.uuid)["status"] == "completed"


def test_given_dial_first_when_verbs_run_then_caller_is_not_answered_before_the_bridge(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[
        {"verb": "dial", "target": [{"type": "sip", "name": "sip:alice@example.com"}]}],
        sip_hosts=("example.com",))
    call = simulate_call(Call(callee=number).bridge_answers(talk=0.05), controller)
    _wait(call)
    assert [a for a, _ in executed(call)][0] != "uuid_answer"
    assert "bridge" in [a for a, _ in executed(call)]


def test_given_failing_webhook_without_fallback_when_call_arrives_then_caller_hears_apology(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    hook_server.reply(Reply(status=500, body=b"boom"))
    account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))
    call = simulate_call(Call(callee=number), controller)
    _wait(call)
    assert len(hook_server.requests) == 3
    apps = executed(call)
    assert apps[0] == ("uuid_answer", "")
    assert apps[1][0] == "speak" and "sorry" in apps[1][1]
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == "webhook_failed:http_status"
    assert record["hangup_reason"] == "application_failed"
    assert "call.failed" in outbox_keys(owner_conn, record["trace_id"])


def test_given_failing_webhook_with_app_json_when_call_arrives_then_app_json_is_the_fallback(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    hook_server.reply(Reply.json([{"verb": "nosuchverb"}]))
    account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"),
                                         app_json=[{"verb": "say", "text": "Fallback script"}])
    call = simulate_call(Call(callee=number), controller)
    _wait(call)
    assert ("speak", "flite|kal|Fallback script") in executed(call)
    assert call_record(owner_conn, call.uuid)["webhook_error"] == "instructions_rejected"


def test_given_empty_webhook_body_when_call_arrives_then_call_ends_unanswered(
        controller, simulate_call, hook_server, number_with_app, owner_conn):
    hook_server.reply(Reply(status=200, body=b""))
    account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))
    call = simulate_call(Call(callee=number), controller)
    _wait(call)
    assert executed(call) == []
    assert hangups(call) == ["NORMAL_CLEARING"]
    assert call_record(owner_conn, call.uuid)["webhook_error"] is None


def test_given_unknown_number_when_call_arrives_then_it_is_refused_with_404_cause(
        controller, simulate_call, owner_conn):
    call = simulate_call(Call(callee="19999999999"), controller)
    _wait(call)
    assert executed(call) == []
    assert hangups(call) == ["UNALLOCATED_NUMBER"]
    assert call_record(owner_conn, call.uuid) is None


def test_given_account_at_its_limit_when_second_call_arrives_then_it_is_refused_unanswered(
        controller, simulate_call, number_with_app, owner_conn, services):
    account, number, _ = number_with_app(max_concurrent_calls=1,
                                         app_json=[{"verb": "pause", "length": 30}])
    first = simulate_call(Call(callee=number).hangup_after(1.0), controller)
    eventually(lambda: services.limiter.counts(account.id)[0] == 1, timeout=5,
               what="the first call holding the account's one slot")
    second = simulate_call(Call(callee=number), controller)
    _wait(second)
    assert executed(second) == []
    assert hangups(second) == ["NORMAL_CIRCUIT_CONGESTION"]
    refused = call_record(owner_conn, second.uuid)
    assert refused["status"] == "refused"
    assert "call.failed" in outbox_keys(owner_conn, refused["trace_id"])
    _wait(first)
    assert services.limiter.counts(account.id)[0] == 0, "a slot leaked"


def test_given_caller_hangs_up_mid_playback_then_record_is_written_and_slot_released(
        controller, simulate_call, number_with_app, owner_conn, services):
    account, number, _ = number_with_app(app_json=[
        {"verb": "play", "url": "https://media.example.com/long.wav"},
        {"verb": "say", "text": "never heard"}])
    scenario = Call(callee=number).media("http_cache://https://media.example.com/long.wav", 20.0)
    call = simulate_call(scenario.hangup_after(0.3), controller)
    _wait(call)
    assert [a for a, _ in executed(call)] == ["uuid_answer", "playback"]
    record = call_record(owner_conn, call.uuid)
    assert record["status"] == "completed"
    assert record["hangup_cause"] == "NORMAL_CLEARING"
    assert services.limiter.counts(account.id)[0] == 0
    assert services.live_calls == {}


def test_given_hold_and_unhold_when_call_is_up_then_hold_events_are_published(
        controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 2}])
    call = simulate_call(Call(callee=number).hold(at=0.3, duration=0.4), controller)
    _wait(call)
    record = call_record(owner_conn, call.uuid)
    keys = outbox_keys(owner_conn, record["trace_id"])
    assert keys.index("call.hold") < keys.index("call.resumed") < keys.index("call.ended")


def _call_paused_by_websocket_app(controller, simulate_call, ws_server, number_with_app):
    """A call whose WebSocket app answered session:new with a long pause, now running it."""
    ws_server.ack_data = [{"verb": "pause", "length": 30}]
    account, number, _ = number_with_app(call_hook_url=ws_server.url())
    call = simulate_call(Call(callee=number), controller)
    ws_server.wait_for(lambda msgs: any(m.get("type") == "session:new" for m in msgs))
    eventually(lambda: ("sleep", "30000") in executed(call), timeout=5, what="the pause running")
    return call


def test_given_websocket_app_when_it_sends_redirect_then_running_verbs_are_replaced(
        controller, simulate_call, ws_server, number_with_app, owner_conn):
    call = _call_paused_by_websocket_app(controller, simulate_call, ws_server, number_with_app)
    ws_server.peers[0].send_json({"type": "command", "command": "redirect",
                                  "data": [{"verb": "say", "text": "Redirected"}]})
    _wait(call)
    apps = executed(call)
    assert ("sleep", "30000") in apps
    assert apps[-1] == ("speak", "flite|kal|Redirected")
    session_new = next(m for m in ws_server.messages if m["type"] == "session:new")
    assert session_new["data"]["callId"] == call.uuid
    assert call_record(owner_conn, call.uuid)["has_webhook"] is True


def test_given_websocket_app_when_it_sends_hangup_then_call_ends(
        controller, simulate_call, ws_server, number_with_app, owner_conn):
    call = _call_paused_by_websocket_app(controller, simulate_call, ws_server, number_with_app)
    ws_server.peers[0].send_json({"type": "command", "command": "hangup"})
    _wait(call)
    assert hangups(call)[0] == "NORMAL_CLEARING"
    assert call_record(owner_conn, call.uuid)["status"] == "completed"


def test_given_recorded_dial_first_when_verbs_run_then_caller_is_not_answered_before_the_bridge(
        controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[
        {"verb": "dial", "record": True, "target": [{"type": "sip", "name": "sip:bob@example.com"}]}],
        sip_hosts=("example.com",))
    call = simulate_call(Call(callee=number).bridge_answers(talk=0.05), controller)
    _wait(call)
    assert [a for a, _ in executed(call)] == ["bridge"]  # no answer, no record_session (183) first
    names = call.happened  # what the channel did, whether the controller subscribed or not
    # the only early media is the bridge answering the caller; the recording starts once bridged
    assert names.count("CHANNEL_PROGRESS_MEDIA") == 1
    assert names.index("CHANNEL_EXECUTE") < names.index("CHANNEL_PROGRESS_MEDIA")
    assert names.index("CHANNEL_BRIDGE") < names.index("RECORD_START") < names.index("RECORD_STOP")
    record = call_record(owner_conn, call.uuid)
    assert record["has_recording"] is True
    assert "media.recording.completed" in outbox_keys(owner_conn, record["trace_id"])


def test_given_number_whose_application_has_nothing_to_run_when_call_arrives_then_503_and_call_failed(
        controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app()  # no flow, no hook, no app_json
    call = simulate_call(Call(callee=number), controller)
    _wait(call)
    assert executed(call) == []
    assert hangups(call) == ["SERVICE_UNAVAILABLE"]
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == "no_application"
    assert "call.failed" in outbox_keys(owner_conn, record["trace_id"])


def test_given_call_in_progress_then_its_socket_has_tcp_keepalive_to_notice_a_vanished_switch(
        controller, simulate_call, number_with_app):
    import socket

    from esl.outbound import KEEPALIVE_IDLE_SECONDS

    account, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 5}])
    call = simulate_call(Call(callee=number).hangup_after(1.0), controller)
    eventually(lambda: controller.connections, timeout=5, what="the call's socket at the controller")
    sock = next(iter(controller.connections))._sock
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == KEEPALIVE_IDLE_SECONDS
    _wait(call)


def test_given_service_provider_at_its_limit_when_another_accounts_call_arrives_then_refused(
        controller, simulate_call, number_with_app, owner_conn, services):
    """Both limits come from the database (accounts, service_providers) with the number lookup."""
    first_account, first_number, _ = number_with_app(app_json=[{"verb": "pause", "length": 30}])
    second_account, second_number, _ = number_with_app(app_json=[{"verb": "pause", "length": 1}])
    assert first_account.service_provider_id == second_account.service_provider_id
    try:
        held = simulate_call(Call(callee=first_number).hangup_after(1.0), controller)
        eventually(lambda: services.limiter.counts(first_account.id)[0] == 1, timeout=5,
                   what="the held call counted")
        in_use = services.limiter.counts(first_account.id, first_account.service_provider_id)[1]
        owner_conn.execute(text("UPDATE service_providers SET max_concurrent_calls = :n WHERE id = :sp"),
                           {"n": in_use, "sp": first_account.service_provider_id})
        owner_conn.commit()
        refused = simulate_call(Call(callee=second_number), controller)
        _wait(refused)
        assert hangups(refused) == ["NORMAL_CIRCUIT_CONGESTION"]
        assert call_record(owner_conn, refused.uuid)["status"] == "refused"
        _wait(held)
    finally:
        owner_conn.execute(text("UPDATE service_providers SET max_concurrent_calls = 0 WHERE id = :sp"),
                           {"sp": first_account.service_provider_id})
        owner_conn.commit()
