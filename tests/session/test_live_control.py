"""POST /api/calls/:callId/actions end to end in one process: the real API (Flask app), the
real controller side (LiveControl on its Redis channel) and a real CallSession driving a
simulated FreeSWITCH call; PostgreSQL for the records and the outbox."""
from __future__ import annotations

import json
import uuid

from sqlalchemy import text

from app.calls import live_calls
from app.db.engine import tenant_session
from app.models import Application, PhoneNumber, SipTargetHost
from app.settings import get_settings
from tests.plugins.database import unique_number
from tests.plugins.eventually import eventually
from tests.plugins.webhook_server import Reply
from tests.session.conftest import call_record
from tests.simulator import Call

PAUSE = [{"verb": "pause", "length": 60}]


def number_for(tenant, verbs, sip_hosts=("example.com",)) -> str:
    number = unique_number()
    with tenant_session(tenant.account_id) as session:
        app = Application(account_id=tenant.account_id, name="live", app_json=verbs)
        session.add(app)
        session.flush()
        session.add(PhoneNumber(account_id=tenant.account_id, number=number, application_id=app.id,
                                answering_mode="webhook"))
        for host in sip_hosts:
            session.add(SipTargetHost(account_id=tenant.account_id, host=host))
    return number


def live_call(simulate_call, controller, redis_client, scenario):
    call = simulate_call(scenario, controller)
    eventually(lambda: live_calls.read(redis_client, get_settings().redis_key_prefix, call.uuid),
               timeout=10, what="the call in the live-call registry")
    return call


def applied(owner_conn, call_id: str) -> list[dict]:
    return [row[0] for row in owner_conn.execute(text(
        "SELECT body->'payload' FROM event_outbox WHERE routing_key = 'call.control.applied' "
        "AND body->'payload'->>'callId' = :c ORDER BY created_at"), {"c": call_id})]


def test_a_running_call_is_listed_for_the_live_view_with_its_numbers_and_phase_until_it_ends(
        admin, tenant, controller, live_control, simulate_call, redis_client):
    prefix = get_settings().redis_key_prefix
    number = number_for(tenant, [{"verb": "say", "text": "hello"}, *PAUSE])
    call = live_call(simulate_call, controller, redis_client, Call(caller="15550001111", callee=number))

    listed = eventually(lambda: [c for c in live_calls.in_progress(redis_client, prefix, tenant.account_id)
                                 if c["phase"] == "answered"], timeout=10, what="the call listed as answered")

    assert [(c["callId"], c["direction"], c["from"], c["to"]) for c in listed] == \
        [(call.uuid, "inbound", "15550001111", number)]
    admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})
    assert call.wait(5), "the call did not end"
    eventually(lambda: live_calls.in_progress(redis_client, prefix, tenant.account_id) == [],
               timeout=10, what="the call gone from the list")


def test_hangup_from_the_api_ends_a_paused_call_with_the_reason_on_its_record(
        admin, tenant, controller, live_control, simulate_call, redis_client, owner_conn, services):
    number = number_for(tenant, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))

    response = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup", "reason": "fraud_check"})

    assert response.status_code == 200, response.get_json()
    assert call.wait(5), "the call did not end"
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["hangup_reason"] == "fraud_check"
    assert record["hangup_cause"] == "NORMAL_CLEARING"
    eventually(lambda: applied(owner_conn, call.uuid), timeout=5, what="call.control.applied")
    [event] = applied(owner_conn, call.uuid)
    assert event["action"] == "hangup" and event["details"] == {"reason": "fraud_check"}
    assert event["by"]["userId"] == str(tenant.admin.id)
    assert live_calls.read(redis_client, get_settings().redis_key_prefix, call.uuid) is None
    assert services.live_sessions == {}
    # the call is over: the same request is now a 404
    again = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})
    assert again.status_code == 404 and again.get_json()["code"] == "call_not_found"


def test_dtmf_mute_and_unmute_reach_the_callers_channel(
        admin, tenant, controller, live_control, simulate_call, redis_client):
    number = number_for(tenant, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))
    path = f"/api/calls/{call.uuid}/actions"

    assert admin.post(path, json={"action": "dtmf", "digits": "12#"}).status_code == 200
    muted = admin.post(path, json={"action": "mute"})
    assert muted.status_code == 200 and muted.get_json()["state"]["muted"] is True
    assert call.audio_bug == ("read", "mute", "-1")
    assert admin.post(path, json={"action": "mute"}).status_code == 200  # already muted: no second bug
    unmuted = admin.post(path, json={"action": "unmute"})
    assert unmuted.get_json()["state"]["muted"] is False and call.audio_bug is None

    assert call.controls == [f"uuid_send_dtmf {call.uuid} 12#",
                             f"uuid_audio {call.uuid} start read mute -1",
                             f"uuid_audio {call.uuid} stop"]
    admin.post(path, json={"action": "hangup"})
    assert call.wait(5)


def test_hold_needs_a_bridged_call_409_call_not_bridged(
        admin, tenant, controller, live_control, simulate_call, redis_client):
    number = number_for(tenant, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))

    response = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hold"})

    assert response.status_code == 409
    assert response.get_json()["code"] == "call_not_bridged"
    assert not any(c.startswith("uuid_hold") for c in call.controls)
    admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})
    assert call.wait(5)


def test_hold_and_unhold_a_bridged_call_hold_the_other_leg(
        admin, tenant, controller, live_control, simulate_call, redis_client):
    number = number_for(tenant, [{"verb": "dial", "target": [{"type": "sip", "name": "sip:bob@example.com"}]}])
    b_leg = str(uuid.uuid4())
    call = live_call(simulate_call, controller, redis_client,
                     Call(callee=number).bridge_answers(talk=30.0, b_leg_uuid=b_leg))
    path = f"/api/calls/{call.uuid}/actions"
    eventually(lambda: admin.post(path, json={"action": "unhold"}).status_code == 200, timeout=10,
               what="the call bridged")

    held = admin.post(path, json={"action": "hold"})
    assert held.status_code == 200 and held.get_json()["state"]["held"] is True
    assert admin.post(path, json={"action": "unhold"}).get_json()["state"]["held"] is False

    assert [c for c in call.controls if c.startswith("uuid_hold")] == [
        f"uuid_hold {b_leg}", f"uuid_hold off {b_leg}"]
    admin.post(path, json={"action": "hangup"})
    assert call.wait(5)


def test_redirect_replaces_a_running_pause_with_new_verbs(
        admin, tenant, controller, live_control, simulate_call, redis_client, owner_conn):
    number = number_for(tenant, [*PAUSE, {"verb": "say", "text": "never said"}])
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))
    eventually(lambda: call.executed("sleep"), timeout=5, what="the pause running")

    response = admin.post(f"/api/calls/{call.uuid}/actions", json={
        "action": "redirect", "verbs": [{"verb": "say", "text": "redirected"},
                                        {"verb": "hangup", "reason": "redirected_then_done"}]})

    assert response.status_code == 200, response.get_json()
    assert call.wait(10), "the new verbs did not run to their hangup"
    speaks = [arg for _, arg in call.executed("speak")]
    assert any("redirected" in arg for arg in speaks)
    assert not any("never said" in arg for arg in speaks)  # the rest of the old list was dropped
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["hangup_reason"] == "redirected_then_done"


def test_redirect_of_a_caller_waiting_in_a_queue_runs_the_new_verbs_and_is_not_an_abandon(
        admin, tenant, controller, live_control, simulate_call, redis_client, owner_conn):
    number = number_for(tenant, [{"verb": "queue", "name": "support", "timeout": 60}])
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))
    eventually(lambda: _outbox_payloads(owner_conn, call.uuid, "queue.caller.enqueued"), timeout=10,
               what="the caller waiting in the queue")

    response = admin.post(f"/api/calls/{call.uuid}/actions", json={
        "action": "redirect", "verbs": [{"verb": "say", "text": "moved on"},
                                        {"verb": "hangup", "reason": "redirected_from_queue"}]})

    assert response.status_code == 200, response.get_json()
    assert call.wait(10), "the new verbs did not run to their hangup"
    assert any("moved on" in arg for _, arg in call.executed("speak"))
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["hangup_reason"] == "redirected_from_queue"
    [left] = _outbox_payloads(owner_conn, call.uuid, "queue.caller.dequeued")
    assert left["reason"] == "redirected" and left["queue"] == "support"
    assert _outbox_payloads(owner_conn, call.uuid, "queue.caller.abandoned") == []
    summary = owner_conn.execute(text("SELECT abandoned, short_abandon FROM interaction_summary "
                                      "WHERE trace_id = :t"), {"t": record["trace_id"]}).one()
    assert (summary.abandoned, summary.short_abandon) == (False, False)


def test_redirect_to_a_hook_url_runs_what_the_hook_returns(
        admin, tenant, controller, live_control, simulate_call, redis_client, hook_server, owner_conn):
    hook_server.reply(Reply.json([{"verb": "hangup", "reason": "from_hook"}]))
    number = number_for(tenant, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))

    response = admin.post(f"/api/calls/{call.uuid}/actions", json={
        "action": "redirect", "hookUrl": hook_server.url("/next")})

    assert response.status_code == 200, response.get_json()
    assert call.wait(10)
    [request] = [r for r in hook_server.requests if r.path == "/next"]
    assert json.loads(request.body)["callId"] == call.uuid
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["hangup_reason"] == "from_hook"


def test_another_tenants_live_call_is_404_and_untouched(
        admin, seed, controller, live_control, simulate_call, redis_client, api):
    other = seed.tenant()
    number = number_for(other, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))

    response = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})

    assert response.status_code == 404 and response.get_json()["code"] == "call_not_found"
    assert not call.done.is_set()
    api.login(other).post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})
    assert call.wait(5)


def _outbox_payloads(owner_conn, call_id: str, key: str) -> list[dict]:
    return [row[0] for row in owner_conn.execute(text(
        "SELECT body->'payload' FROM event_outbox WHERE routing_key = :k "
        "AND body->'payload'->>'callId' = :c ORDER BY created_at"), {"k": key, "c": call_id})]


def test_record_start_and_stop_record_the_call_and_a_second_start_or_stop_is_409(
        admin, tenant, controller, live_control, simulate_call, redis_client, owner_conn):
    number = number_for(tenant, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))
    path = f"/api/calls/{call.uuid}/actions"

    started = admin.post(path, json={"action": "record_start"})
    again = admin.post(path, json={"action": "record_start"})
    stopped = admin.post(path, json={"action": "record_stop"})
    not_recording = admin.post(path, json={"action": "record_stop"})
    admin.post(path, json={"action": "hangup"})

    assert started.status_code == 200 and started.get_json()["state"]["recording"] is True
    assert again.status_code == 409 and again.get_json()["code"] == "already_recording"
    assert stopped.status_code == 200 and stopped.get_json()["state"]["recording"] is False
    assert not_recording.status_code == 409 and not_recording.get_json()["code"] == "not_recording"
    records = [c for c in call.controls if c.startswith("uuid_record")]
    file = f"/var/spool/fs/rec/{tenant.account_id}_{call.uuid}_"
    assert [c.split()[2] for c in records] == ["start", "stop"] and all(c.split()[3].startswith(file) for c in records)
    assert call.wait(5)
    [completed] = eventually(lambda: _outbox_payloads(owner_conn, call.uuid, "media.recording.completed"),
                             timeout=10, what="media.recording.completed")
    assert completed["stereo"] is True
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["has_recording"] is True


def test_whisper_says_the_text_to_the_caller_only_and_needs_a_bridge_for_the_bridged_leg(
        admin, tenant, controller, live_control, simulate_call, redis_client):
    number = number_for(tenant, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))
    path = f"/api/calls/{call.uuid}/actions"

    said = admin.post(path, json={"action": "whisper", "text": "Your agent's  back\nsoon"})
    to_bridged = admin.post(path, json={"action": "whisper", "text": "Hello", "leg": "bridged"})
    no_text = admin.post(path, json={"action": "whisper", "leg": "caller"})
    admin.post(path, json={"action": "hangup"})

    assert said.status_code == 200
    assert f"uuid_broadcast {call.uuid} 'speak::flite|kal|Your agent s back soon' aleg" in call.controls
    assert to_bridged.status_code == 409 and to_bridged.get_json()["code"] == "call_not_bridged"
    assert no_text.status_code == 422
    assert call.wait(5)


def test_whisper_plays_a_public_audio_url_to_the_caller_and_an_internal_one_is_refused_unsafe_url(
        admin, tenant, controller, live_control, simulate_call, redis_client, owner_conn):
    number = number_for(tenant, PAUSE)
    call = live_call(simulate_call, controller, redis_client, Call(callee=number))
    path = f"/api/calls/{call.uuid}/actions"

    played = admin.post(path, json={"action": "whisper", "url": "https://media.example.com/notice.wav"})
    internal = admin.post(path, json={"action": "whisper", "url": "https://internal.example.com/a.wav"})
    both = admin.post(path, json={"action": "whisper", "url": "https://media.example.com/a.wav", "text": "Hi"})
    admin.post(path, json={"action": "hangup"})

    assert played.status_code == 200, played.get_json()
    assert internal.status_code == 422 and internal.get_json()["code"] == "unsafe_url"
    assert "private" in internal.get_json()["message"]
    assert both.status_code == 422
    assert [c for c in call.controls if c.startswith("uuid_broadcast")] == [
        f"uuid_broadcast {call.uuid} playback::http_cache://https://media.example.com/notice.wav aleg"]
    assert call.wait(5)
    [applied] = [a for a in _outbox_payloads(owner_conn, call.uuid, "call.control.applied") if a["action"] == "whisper"]
    assert applied["details"] == {"leg": "caller", "url": "https://media.example.com/notice.wav"}
