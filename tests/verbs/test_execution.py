"""Each verb's exact FreeSWITCH applications and arguments, on a simulated call over real ESL."""
from __future__ import annotations

import json
import re
import uuid

from app.routing.lcr import bridge_string, compile_table
from app.routing.rows import CarrierEntryRow, CarrierRow, GatewayRow, PlanRow, RouteRow, RoutingRows
from esl.errors import ChannelHungUp
from esl.verbs import OutcomeKind
from tests.plugins.webhook_server import Reply
from tests.simulator import Call
from tests.verbs.conftest import RECORDINGS_DIR, AppDefaults


def _after_answer(run) -> list[tuple[str, str]]:
    apps = run.apps()
    assert apps[0] == ("answer", "")
    return apps[1:]


def test_given_say_with_loop_when_executed_then_speak_flite_with_argument_safe_text_each_time(run_on_call):
    run = run_on_call(Call(), [{"verb": "say", "text": "Hello | it's\nme ${x}", "voice": "slt", "loop": 2}])
    assert run.error is None
    assert _after_answer(run) == [("speak", "flite|slt|Hello it's me $ {x}")] * 2
    assert run.outcome.reason == "list_finished"


def test_given_say_without_voice_when_application_voice_is_not_flite_then_kal(run_on_call):
    run = run_on_call(Call(), [{"verb": "say", "text": "Hi"}], application=AppDefaults(voice="Polly.Joanna"))
    assert _after_answer(run) == [("speak", "flite|kal|Hi")]
    run = run_on_call(Call(), [{"verb": "say", "text": "Hi"}], application=AppDefaults(voice="rms"))
    assert _after_answer(run) == [("speak", "flite|rms|Hi")]


def test_given_play_with_loop_when_executed_then_playback_through_http_cache(run_on_call):
    url = "https://media.example.com/a.mp3?v=2"
    run = run_on_call(Call(), [{"verb": "play", "url": url, "loop": 2}])
    assert _after_answer(run) == [("playback", f"http_cache://{url}")] * 2


def test_given_gather_with_hook_when_caller_presses_digits_then_hook_gets_digits_and_reply_runs(
        run_on_call, hook_server):
    hook_server.reply(Reply.json([{"verb": "say", "text": "You chose sales"}]))
    verbs = [{"verb": "tag", "data": {"campaign": "spring"}},
             {"verb": "gather", "numDigits": 2, "timeout": 7, "say": {"text": "Press 1 then 2, it's easy"},
              "actionHook": hook_server.url("/menu")},
             {"verb": "say", "text": "not reached: the hook reply replaced the list"}]
    run = run_on_call(Call().press("12#"), verbs)
    assert run.error is None
    assert _after_answer(run) == [
        ("play_and_get_digits",
         "2 2 1 7000 # 'say:flite:kal:Press 1 then 2, it\\'s easy' silence_stream://250 sbc_gather_digits [0-9*#]+"),
        ("speak", "flite|kal|You chose sales"),
    ]
    (request,) = hook_server.requests
    body = json.loads(request.body)
    assert (body["digits"], body["speech"], body["tags"]) == ("12", "", {"campaign": "spring"})
    assert body["callId"] == run.call.uuid and body["accountSid"] == run.account_id


def test_given_gather_without_hook_or_digits_when_executed_then_the_list_continues(run_on_call):
    run = run_on_call(Call(), [{"verb": "gather", "finishOnKey": "", "play": {"url": "https://m.example.com/p.wav"}},
                               {"verb": "say", "text": "next"}])
    assert _after_answer(run) == [
        ("play_and_get_digits", "1 64 1 5000 none http_cache://https://m.example.com/p.wav silence_stream://250 sbc_gather_digits [0-9*#]+"),
        ("speak", "flite|kal|next")]


def test_given_dial_to_user_and_sip_when_bridge_fails_then_caller_stays_up_and_failure_is_reported(run_on_call):
    verbs = [{"verb": "dial", "timeout": 20, "target": [{"type": "user", "name": "alice"},
                                                       {"type": "sip", "name": "sip:bob@pbx.example.com"}]},
             {"verb": "say", "text": "dropped: dial ends the list"}]
    run = run_on_call(Call().bridge_fails("USER_BUSY", "486"), verbs)
    assert run.error is None
    assert run.setvars() == [("continue_on_fail", "true"), ("hangup_after_bridge", "true")]
    assert _after_answer(run) == [
        ("bridge", f"{{call_timeout=20,sbc_trace_id={run.trace_id}}}user/alice@${{domain_name}}|sofia/external/bob@pbx.example.com")]
    assert run.outcome.kind is OutcomeKind.END
    assert (run.outcome.reason, run.outcome.data["dialStatus"], run.outcome.data["cause"]) == (
        "dial_failed", "USER_BUSY", "USER_BUSY")
    # the simulator hangs up a-legs only without continue_on_fail; our own hangup came after
    hangups = [c for c in run.call.commands if c.name == "sendmsg" and c.headers.get("call-command") == "hangup"]
    assert len(hangups) == 1


def _dial_id(run) -> str:
    """The dial's own id (a fresh uuid per dial, app.routing.lcr.DIAL_ID_VARIABLE)."""
    bridge = next(arg for app, arg in run.call.executed() if app == "bridge")
    return re.search(r"sbc_dial_id=([0-9a-f]{32})", bridge).group(1)


def test_given_dial_phone_with_owned_caller_id_and_record_when_answered_then_lcr_legs_and_recording(run_on_call):
    carrier, gw_a, gw_b, plan, route = (uuid.uuid4() for _ in range(5))
    table = compile_table(RoutingRows(
        carriers=(CarrierRow(id=carrier, name="acme"),),
        gateways=(GatewayRow(id=gw_a, carrier_id=carrier, ipv4="192.0.2.10", outbound=True),
                  GatewayRow(id=gw_b, carrier_id=carrier, ipv4="192.0.2.11", outbound=True)),
        plans=(PlanRow(id=plan, name="default"),),
        routes=(RouteRow(id=route, lcr_id=plan, regex="^1"),),
        entries=(CarrierEntryRow(id=uuid.uuid4(), lcr_route_id=route, carrier_id=carrier),)))
    routed = bridge_string(table.explain("14155550100", None))
    run = run_on_call(Call().bridge_answers(talk=0.05),
                      [{"verb": "dial", "callerId": "+15551230000", "record": True,
                        "target": [{"type": "phone", "name": "+14155550100"}]}],
                      router=lambda number: bridge_string(table.explain(number, None)),
                      number_owner=lambda number: number == "+15551230000")
    assert run.error is None
    globals_, legs = routed[1:].split("}", 1)
    apps = _after_answer(run)
    assert apps[0][0] == "record_session"
    assert apps[0][1].startswith(f"{RECORDINGS_DIR}/{run.account_id}_{run.call.uuid}_") and apps[0][1].endswith(".wav")
    assert apps[1] == ("bridge", "{call_timeout=60,origination_caller_id_number=+15551230000,"
                                 f"sbc_trace_id={run.trace_id},sbc_dial_id={_dial_id(run)},{globals_}}}{legs}")
    assert run.setvars() == [("continue_on_fail", "true"), ("hangup_after_bridge", "true"),
                             ("RECORD_STEREO", "true"), ("RECORD_BRIDGE_REQ", "true"),
                             ("media_bug_answer_req", "true")]
    assert run.outcome.reason == "dial_completed" and run.outcome.data["dialStatus"] == "SUCCESS"
    assert run.ctx.features == {"has_recording"}


def test_given_dial_caller_id_not_owned_when_executed_then_no_bridge_and_rejection_event(run_on_call, owner_conn):
    run = run_on_call(Call(), [{"verb": "dial", "callerId": "+15550000000", "target": [{"type": "user", "name": "a"}]}],
                      number_owner=lambda number: False)
    assert run.error is None
    assert _after_answer(run) == []
    assert run.outcome.reason == "caller_id_not_owned"
    (key, body), = run.events(owner_conn)
    assert key == "interaction.dial.rejected"
    assert body["payload"]["callerId"] == "+15550000000" and body["payload"]["reason"] == "caller_id_not_owned"


def test_given_queue_with_announcements_when_wait_runs_out_then_position_moh_and_timeout_hook(
        run_on_call, hook_server, owner_conn, redis_client):
    hook_server.reply(Reply.json([{"verb": "hangup", "reason": "queue-timeout"}]))
    scenario = Call().media("local_stream://moh", 2.0)  # playback_timeout_sec=2 ends the stream
    run = run_on_call(scenario, [{"verb": "queue", "name": "support", "moh": "moh", "timeout": 2,
                                  "announceInterval": 5, "timeoutHook": hook_server.url("/qt")}])
    assert run.error is None
    assert _after_answer(run) == [("speak", "flite|kal|You are caller number 1"),
                                  ("playback", "local_stream://moh")]
    assert run.setvars() == [("playback_timeout_sec", "2")]
    assert json.loads(hook_server.requests[0].body)["queueResult"] == "timeout"
    assert run.outcome.reason == "hangup" and run.ctx.hangup_reason == "queue-timeout"
    assert [k for k, _ in run.events(owner_conn, 2)] == ["queue.caller.enqueued", "queue.caller.dequeued"]
    assert not list(redis_client.scan_iter(match=f"*queue:{run.account_id}:*"))


def test_given_queue_when_moh_stream_returns_early_then_the_rest_is_slept_not_spun(run_on_call):
    run = run_on_call(Call(), [{"verb": "queue", "name": "q", "timeout": 10, "announceInterval": 5,
                                "announcePosition": False}])
    assert _after_answer(run) == [("playback", "local_stream://default"), ("sleep", "10000")]
    assert run.setvars() == [("playback_timeout_sec", "10")]
    assert run.outcome.reason == "queue_timeout"


def test_given_caller_in_queue_when_caller_hangs_up_then_abandoned_and_position_released(
        run_on_call, owner_conn, redis_client):
    run = run_on_call(Call().media("local_stream://default", 5.0).hangup_after(0.3),
                      [{"verb": "queue", "name": "sales", "timeout": 60}])
    assert isinstance(run.error, ChannelHungUp)
    assert [k for k, _ in run.events(owner_conn, 2)] == ["queue.caller.enqueued", "queue.caller.abandoned"]
    assert not list(redis_client.scan_iter(match=f"*queue:{run.account_id}:*"))


def test_given_conference_with_flags_when_caller_leaves_then_room_prefixed_by_account(run_on_call):
    run = run_on_call(Call().hangup_after(0.3),
                      [{"verb": "conference", "name": "standup", "muted": True, "startOnEnter": False,
                        "endOnExit": True, "maxParticipants": 5, "record": True}])
    assert isinstance(run.error, ChannelHungUp)
    assert _after_answer(run) == [("conference", f"{run.account_id}-standup@default+flags{{mute|wait-mod|endconf}}")]
    setvars = dict(run.setvars())
    assert setvars["conference_max_members"] == "5"
    assert setvars["conference_auto_record"].startswith(f"{RECORDINGS_DIR}/{run.account_id}_")


def test_given_record_when_caller_hangs_up_then_recording_completed_event_with_status_hook(run_on_call, owner_conn):
    run = run_on_call(Call().hangup_after(0.3),
                      [{"verb": "record", "format": "wav", "stereo": False,
                        "statusHook": "https://hooks.example.com/rec"}])
    assert isinstance(run.error, ChannelHungUp)
    apps = _after_answer(run)
    assert [a for a, _ in apps] == ["record_session", "park"]
    assert run.setvars() == [("RECORD_STEREO", "false"), ("media_bug_answer_req", "true")]
    (key, body), = run.events(owner_conn)
    assert key == "media.recording.completed"
    assert body["payload"]["path"] == apps[0][1]
    assert body["payload"]["statusHook"] == "https://hooks.example.com/rec"


def test_given_listen_when_fork_starts_then_exact_command_and_call_parked_until_hangup(run_on_call):
    run = run_on_call(Call().hangup_after(0.3),
                      [{"verb": "listen", "url": "wss://s.example.com/a", "sampleRate": 8000,
                        "mixType": "stereo", "metadata": {"who": "two words"}}])
    assert isinstance(run.error, ChannelHungUp)
    assert run.apis() == [f"uuid_audio_fork {run.call.uuid} start wss://s.example.com/a stereo 8k "
                          "'{\"who\":\"two words\"}'"]
    assert _after_answer(run) == [("park", "")]


def test_given_listen_with_defaults_when_executed_then_mixed_16k_and_empty_metadata(run_on_call):
    run = run_on_call(Call().hangup_after(0.2), [{"verb": "listen", "url": "wss://s.example.com/a"}])
    assert run.apis() == [f"uuid_audio_fork {run.call.uuid} start wss://s.example.com/a mixed 16k {{}}"]


def test_given_pause_tag_and_redirect_when_executed_then_sleep_and_hook_carries_tags(run_on_call, hook_server):
    hook_server.reply(Reply.json([{"verb": "hangup", "reason": "done"}]))
    run = run_on_call(Call(), [{"verb": "pause", "length": 0.25}, {"verb": "tag", "data": {"vip": True}},
                               {"verb": "redirect", "url": hook_server.url("/next")},
                               {"verb": "say", "text": "replaced"}])
    assert run.error is None
    assert _after_answer(run) == [("sleep", "250")]
    assert json.loads(hook_server.requests[0].body)["tags"] == {"vip": True}
    hangups = [c for c in run.call.commands if c.name == "sendmsg" and c.headers.get("call-command") == "hangup"]
    assert hangups[0].headers["hangup-cause"] == "NORMAL_CLEARING"
    assert run.ctx.hangup_reason == "done"


def test_given_hook_reply_empty_body_when_redirecting_then_call_ends_without_instructions(run_on_call, hook_server):
    hook_server.reply(Reply(body=b""))
    run = run_on_call(Call(), [{"verb": "redirect", "url": hook_server.url("/empty")}])
    assert run.outcome.reason == "no_instructions"


def test_given_hook_reply_with_unknown_verb_when_redirecting_then_rejected_and_nothing_runs(run_on_call, hook_server):
    from esl.verbs import VerbListRejected

    hook_server.reply(Reply.json([{"verb": "say", "text": "a"}, {"verb": "teleport"}]))
    run = run_on_call(Call(), [{"verb": "redirect", "url": hook_server.url("/bad")}])
    assert isinstance(run.error, VerbListRejected)
    assert _after_answer(run) == []


def test_given_caller_hangs_up_mid_say_when_running_then_channel_hung_up_propagates(run_on_call):
    run = run_on_call(Call().media("flite|kal|long", 2.0).hangup_after(0.2),
                      [{"verb": "say", "text": "long"}, {"verb": "say", "text": "never"}])
    assert isinstance(run.error, ChannelHungUp)
    assert _after_answer(run) == [("speak", "flite|kal|long")]


def test_given_speech_gather_when_executed_then_play_and_detect_speech_with_pocketsphinx(run_on_call, hook_server):
    hook_server.reply(Reply(body=b""))
    run = run_on_call(Call(), [{"verb": "gather", "input": ["speech"], "say": {"text": "Say sales or support"},
                                "actionHook": hook_server.url("/speech")}])
    assert _after_answer(run) == [
        ("play_and_detect_speech", "'say:flite:kal:Say sales or support' detect:pocketsphinx gather")]
    assert json.loads(hook_server.requests[0].body)["speech"] == ""
    assert run.setvars() == [("detect_speech_result", "")]
    assert run.outcome.reason == "no_instructions"


def test_given_two_gathers_when_only_the_first_gets_digits_then_the_second_reports_none(run_on_call, hook_server):
    hook_server.reply(Reply.json([{"verb": "gather", "numDigits": 1, "actionHook": hook_server.url("/second")}]),
                      Reply(body=b""))
    run = run_on_call(Call().press("7"), [{"verb": "gather", "numDigits": 1, "actionHook": hook_server.url("/first")}])
    first, second = (json.loads(r.body)["digits"] for r in hook_server.requests)
    assert (first, second) == ("7", "")


def test_given_pocketsphinx_nlsml_when_parsed_then_first_input_text():
    from esl.verbs.gather import parse_speech

    nlsml = ('<?xml version="1.0"?><result grammar="gather"><interpretation grammar="gather" '
             'confidence="91"><input mode="speech">sales</input></interpretation></result>')
    assert parse_speech(nlsml) == "sales"
    assert parse_speech("") == ""
