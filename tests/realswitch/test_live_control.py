"""Live call control on the real switch: a sipp caller in a long ``pause``, acted on through
``POST /api/calls/:callId/actions`` (the real sbc api → Redis → the controller driving the call
→ FreeSWITCH): hang-up with a reason on the record, DTMF sent to the caller, mute as a media bug
on the caller's channel; and a caller waiting in a queue nobody answers, redirected to new verbs
(it leaves the line as ``redirected``, not as an abandon)."""
from __future__ import annotations

import time
import uuid
import wave
from pathlib import Path

from tests.realswitch.provision import poll

PAUSE = [{"verb": "pause", "length": 30}]


def _live_call(tenant, sipp, number):
    caller = sipp.start_calls(number, scenario="uac-wait-bye.xml")
    started = poll(lambda: [e for e in tenant.events("call.answered")
                            if e["payload"].get("callId") in _call_ids(tenant, number)], 15)
    assert started, "the call was never answered"
    return caller, started[0]["payload"]["callId"]


def _call_ids(tenant, number) -> set[str]:
    return {e["payload"]["callId"] for e in tenant.events("call.started") if e["payload"].get("to") == number}


def _applied(tenant, call_id):
    return [e["payload"] for e in tenant.events("call.control.applied") if e["payload"]["callId"] == call_id]


def test_hangup_from_the_api_ends_the_call_with_the_reason_on_the_record(tenant, sipp, real_switch):
    number = tenant.number_for(PAUSE)
    caller, call_id = _live_call(tenant, sipp, number)

    asked = time.monotonic()
    body = tenant.admin.post(f"/api/calls/{call_id}/actions", {"action": "hangup", "reason": "ops_cleanup"},
                             expect=200)

    assert body["action"] == "hangup"
    result = caller.wait(20)
    assert result.ok, result.errors  # the caller got the switch's BYE
    assert time.monotonic() - asked < 10  # not the pause's 30 s
    [record] = tenant.wait_record(number)
    assert record["hangup_reason"] == "ops_cleanup"
    assert record["status"] == "completed"
    assert poll(lambda: _applied(tenant, call_id), 10)[0]["details"] == {"reason": "ops_cleanup"}
    tenant.admin.post(f"/api/calls/{call_id}/actions", {"action": "hangup"}, expect=404)


def test_dtmf_and_mute_reach_the_callers_channel_on_the_switch(tenant, sipp, real_switch):
    number = tenant.number_for(PAUSE)
    caller, call_id = _live_call(tenant, sipp, number)
    path = f"/api/calls/{call_id}/actions"

    # 200 only once the switch answered +OK to uuid_send_dtmf on the caller's channel (an -ERR
    # is a 409); the digits themselves are not observable here: sipp does not decode RFC 2833
    # and the switch logs sent DTMF only at debug level (its log file is at notice)
    tenant.admin.post(path, {"action": "dtmf", "digits": "1#"}, expect=200)
    muted = tenant.admin.post(path, {"action": "mute"}, expect=200)
    bugs = real_switch.api(f"uuid_buglist {call_id}")
    tenant.admin.post(path, {"action": "unmute"}, expect=200)
    bugs_after = real_switch.api(f"uuid_buglist {call_id}")
    tenant.admin.post(path, {"action": "hangup"}, expect=200)

    assert muted["state"]["muted"] is True
    # switch_ivr_session_audio's media bug, as uuid_buglist shows it on 1.10.12
    assert "<function>audio</function>" in bugs and "<target>mute</target>" in bugs, bugs
    assert "<function>audio</function>" not in bugs_after, bugs_after
    assert caller.wait(20).ok
    actions = [e["action"] for e in poll(lambda: len(_applied(tenant, call_id)) >= 4 and _applied(tenant, call_id), 10)]
    assert actions == ["dtmf", "mute", "unmute", "hangup"], actions


def test_redirect_of_a_caller_waiting_in_a_queue_runs_the_new_verbs_and_is_not_an_abandon(tenant, sipp, real_switch):
    queue = tenant.admin.post("/api/queues", {"name": f"rd-{uuid.uuid4().hex[:6]}"})  # nobody to answer
    number = tenant.number_for([{"verb": "queue", "name": queue["name"], "timeout": 120}])
    caller = sipp.start_calls(number, scenario="uac-wait-bye.xml")
    [enqueued] = poll(lambda: [e["payload"] for e in tenant.events("queue.caller.enqueued")
                               if e["payload"]["callId"] in _call_ids(tenant, number)], 15)
    call_id = enqueued["callId"]

    asked = time.monotonic()
    tenant.admin.post(f"/api/calls/{call_id}/actions", {
        "action": "redirect", "verbs": [{"verb": "say", "text": "You have been redirected."},
                                        {"verb": "hangup", "reason": "redirected"}]}, expect=200)

    result = caller.wait(25)
    assert result.ok, result.errors
    assert time.monotonic() - asked < 15  # the say and the hangup, not the rest of the wait
    [record] = tenant.wait_record(number)
    assert record["hangup_reason"] == "redirected"
    assert "say" in (record["journey"] or "")
    [left] = poll(lambda: [e["payload"] for e in tenant.events("queue.caller.dequeued")
                           if e["payload"]["callId"] == call_id], 10)
    assert left["reason"] == "redirected" and left["queue"] == queue["name"]
    assert not [e for e in tenant.events("queue.caller.abandoned") if e["payload"]["callId"] == call_id]


def test_record_start_and_stop_leave_a_stereo_file_as_long_as_the_recorded_stretch(tenant, sipp, real_switch):
    number = tenant.number_for(PAUSE)
    caller, call_id = _live_call(tenant, sipp, number)
    path = f"/api/calls/{call_id}/actions"

    started = tenant.admin.post(path, {"action": "record_start"}, expect=200)
    time.sleep(2.0)  # scenario: 2 s recorded
    tenant.admin.post(path, {"action": "record_start"}, expect=409)
    tenant.admin.post(path, {"action": "record_stop"}, expect=200)
    tenant.admin.post(path, {"action": "hangup"}, expect=200)

    assert started["state"]["recording"] is True
    assert caller.wait(20).ok
    [completed] = poll(lambda: [e["payload"] for e in tenant.events("media.recording.completed")
                                if e["payload"]["callId"] == call_id], 10)
    recording = Path(completed["path"])
    assert recording.parent == real_switch.recordings and completed["stereo"] is True
    with wave.open(str(recording)) as wav:
        seconds, channels = wav.getnframes() / wav.getframerate(), wav.getnchannels()
    assert channels == 2
    assert abs(seconds - 2.0) <= 0.5, seconds  # the stretch between start and stop (two API round trips)
    [record] = tenant.wait_record(number)
    assert record["has_recording"] is True


def test_whisper_runs_speak_on_the_callers_channel(tenant, sipp, real_switch):
    number = tenant.number_for(PAUSE)
    caller, call_id = _live_call(tenant, sipp, number)
    path = f"/api/calls/{call_id}/actions"

    tenant.admin.post(path, {"action": "whisper", "text": "Your agent's on the way, thanks for waiting."},
                      expect=200)

    # the broadcast runs as the channel's application while it speaks (~2 s with flite)
    assert poll(lambda: real_switch.api(f"uuid_getvar {call_id} current_application").strip() == "speak", 5), \
        real_switch.log_tail(30)
    tenant.admin.post(path, {"action": "whisper", "text": "x", "leg": "bridged"}, expect=409)
    tenant.admin.post(path, {"action": "hangup"}, expect=200)
    assert caller.wait(20).ok
