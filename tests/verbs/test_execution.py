"""Each verb's exact FreeSWITCH applications and arguments, on a simulated call over real ESL."""
from __future__ import annotations

import json
import re
import uuid

import pytest

from app.routing.lcr import bridge_string, compile_table
from app.routing.rows import CarrierEntryRow, CarrierRow, GatewayRow, PlanRow, RouteRow, RoutingRows
from app.verbs import OutcomeKind
from app.verbs.gather import Gather
from esl.errors import ChannelHungUp
from tests.plugins.webhook_server import Reply
from tests.simulator import Call
from tests.verbs.conftest import RECORDINGS_DIR, AppDefaults
from tests.verbs.directory_fake import DirectoryContact


def _after_answer(run) -> list[tuple[str, str]]:
    apps = run.apps()
    assert apps[0] == ("uuid_answer", "")
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
         "2 2 1 7000 # 'say:Press 1 then 2, it\\'s easy' silence_stream://250 sbc_gather_digits [0-9*#]+"),
        ("speak", "flite|kal|You chose sales"),
    ]
    assert run.setvars() == [("read_terminator_used", ""), ("tts_engine", "flite"), ("tts_voice", "kal")]
    assert run.call.refused_prompts == []
    (request,) = hook_server.requests
    body = json.loads(request.body)
    assert (body["digits"], body["speech"], body["tags"]) == ("12", "", {"campaign": "spring"})
    assert body["reason"] == "digits"  # numDigits reached before the caller's '#'
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
    run = run_on_call(Call().bridge_fails("USER_BUSY", "486"), verbs,
                      sip_policy=lambda uri: None,  # pbx.example.com listed for the account
                      contact=DirectoryContact("alice", domain="acme"))
    assert run.error is None
    assert run.setvars() == [("continue_on_fail", "true"), ("hangup_after_bridge", "true")]
    assert _after_answer(run) == [
        ("bridge", f"{{call_timeout=20,leg_timeout=20,sbc_trace_id={run.trace_id}}}user/alice@acme|sofia/external/bob@pbx.example.com")]
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


def test_given_dial_phone_with_owned_caller_id_and_record_when_answered_then_lcr_legs_and_recording(
        run_on_call, owner_conn):
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
    assert _after_answer(run) == [("bridge", "{call_timeout=60,leg_timeout=60,origination_caller_id_number=+15551230000,"
                                             f"sbc_trace_id={run.trace_id},sbc_dial_id={_dial_id(run)},{globals_}}}{legs}")]
    setvars = run.setvars()
    path = dict(setvars)["bridge_pre_execute_aleg_data"]
    assert path.startswith(f"{RECORDINGS_DIR}/{run.account_id}_{run.call.uuid}_") and path.endswith(".wav")
    assert setvars == [("continue_on_fail", "true"), ("hangup_after_bridge", "true"),
                       ("RECORD_STEREO", "true"), ("RECORD_PRE_BUFFER_FRAMES", "0"),
                       ("bridge_pre_execute_aleg_app", "record_session"),
                       ("bridge_pre_execute_aleg_data", path)]
    assert run.outcome.reason == "dial_completed" and run.outcome.data["dialStatus"] == "SUCCESS"
    assert run.ctx.features == {"has_recording"}
    (key, body), = run.events(owner_conn)
    assert key == "media.recording.completed"
    assert {k: body["payload"][k] for k in ("path", "format", "stereo", "statusHook")} == {
        "path": path, "format": "wav", "stereo": True, "statusHook": None}


def test_given_dial_with_record_when_bridge_fails_then_nothing_recorded_or_reported(run_on_call, owner_conn):
    run = run_on_call(Call().bridge_fails("USER_BUSY", "486"),
                      [{"verb": "dial", "record": True, "target": [{"type": "sip", "name": "sip:b@pbx.example.com"}]}],
                      sip_policy=lambda uri: None)
    assert run.outcome.reason == "dial_failed"
    assert run.ctx.features == set()
    assert [e for e in run.call.emitted if e.name in ("RECORD_START", "RECORD_STOP")] == []
    assert run.events(owner_conn, timeout=0.3) == []


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
    scenario = Call().media("local_stream://moh", 60.0)  # endless: the verb breaks it at the deadline
    run = run_on_call(scenario, [{"verb": "queue", "name": "support", "moh": "moh", "timeout": 4,
                                  "announceInterval": 5, "timeoutHook": hook_server.url("/qt")}])
    assert run.error is None
    # one playback for the whole wait, queued right behind the announcement: no chunks, no sleep
    assert _after_answer(run) == [("speak", "flite|kal|You are caller number 1"), ("playback", "local_stream://moh")]
    # no playback_timeout_sec left behind; the timer goes with the music (app/verbs/hold_music.py)
    assert run.setvars() == [("timer_name", "soft"), ("timer_name", "")]
    assert json.loads(hook_server.requests[0].body)["queueResult"] == "timeout"
    assert run.outcome.reason == "hangup" and run.ctx.hangup_reason == "queue-timeout"
    assert [k for k, _ in run.events(owner_conn, 2)] == ["queue.caller.enqueued", "queue.caller.dequeued"]
    assert not list(redis_client.scan_iter(match=f"*cc:{run.account_id}:q:*"))


def test_given_queue_when_moh_stream_returns_early_then_the_rest_is_slept_not_spun(run_on_call):
    run = run_on_call(Call(), [{"verb": "queue", "name": "q", "timeout": 4, "announceInterval": 5,
                                "announcePosition": False}])
    (music, stream), (sleep, ms) = _after_answer(run)
    assert (music, stream, sleep) == ("playback", "local_stream://default", "sleep")
    assert 3_800 < int(ms) < 4_000  # the rest of the 4 s, to the millisecond
    assert run.setvars() == [("timer_name", "soft")]
    assert run.outcome.reason == "queue_timeout"


def test_given_caller_in_queue_when_caller_hangs_up_then_abandoned_and_position_released(
        run_on_call, owner_conn, redis_client):
    run = run_on_call(Call().media("local_stream://default", 5.0).hangup_after(0.3),
                      [{"verb": "queue", "name": "sales", "timeout": 60}])
    assert isinstance(run.error, ChannelHungUp)
    assert [k for k, _ in run.events(owner_conn, 2)] == ["queue.caller.enqueued", "queue.caller.abandoned"]
    assert not list(redis_client.scan_iter(match=f"*cc:{run.account_id}:q:*"))


def test_given_conference_with_flags_and_record_when_caller_leaves_then_room_prefixed_and_leg_recorded(
        run_on_call, owner_conn):
    run = run_on_call(Call().hangup_after(0.3),
                      [{"verb": "conference", "name": "standup", "muted": True, "startOnEnter": False,
                        "endOnExit": True, "maxParticipants": 5, "record": True}])
    assert isinstance(run.error, ChannelHungUp)
    (record, path), conference = _after_answer(run)
    assert record == "record_session" and path.startswith(f"{RECORDINGS_DIR}/{run.account_id}_{run.call.uuid}_")
    assert conference == ("conference", f"{run.account_id}-standup@default+flags{{mute|wait-mod|endconf}}")
    assert run.setvars() == [("conference_max_members", "5"), ("RECORD_STEREO", "true"),
                             ("RECORD_PRE_BUFFER_FRAMES", "0")]  # no pre-buffer a flush could lose
    (key, body), = run.events(owner_conn)
    assert key == "media.recording.completed" and body["payload"]["path"] == path


def test_given_record_when_caller_hangs_up_then_held_with_silence_and_recording_completed_event(
        run_on_call, owner_conn):
    run = run_on_call(Call().hangup_after(0.3),
                      [{"verb": "record", "format": "wav", "stereo": False,
                        "statusHook": "https://hooks.example.com/rec"}])
    assert isinstance(run.error, ChannelHungUp)  # held until the caller hung up, not 40 ms
    apps = _after_answer(run)
    assert apps[1:] == [("playback", "silence_stream://-1")]
    # no pre-buffer a change of packet size could flush; a timer-paced hold (docs/media.md)
    assert run.setvars() == [("RECORD_STEREO", "false"), ("RECORD_PRE_BUFFER_FRAMES", "0"),
                             ("timer_name", "soft")]
    (key, body), = run.events(owner_conn)
    assert key == "media.recording.completed"
    payload = body["payload"]
    assert (payload["path"], payload["format"], payload["stereo"]) == (apps[0][1], "wav", False)
    assert payload["statusHook"] == "https://hooks.example.com/rec"
    assert payload["seconds"] >= 0.3 and payload["completionCause"] == "success-silence"
    assert (payload["callId"], payload["traceId"], payload["accountSid"]) == (
        run.call.uuid, run.trace_id, run.account_id)


def test_given_a_channel_under_socket_control_when_parked_then_park_returns_at_once_like_freeswitch(run_on_call):
    def park(ctx):
        ctx.execute("park")
        return ctx.conn.hung_up

    run = run_on_call(Call().hangup_after(5.0), park)
    assert run.error is None and run.outcome is False  # park did not hold: the caller is still there


def test_given_listen_when_fork_starts_then_exact_command_and_call_held_with_silence_until_hangup(run_on_call):
    run = run_on_call(Call().hangup_after(0.3),
                      [{"verb": "listen", "url": "wss://s.example.com/a", "sampleRate": 8000,
                        "mixType": "stereo", "metadata": {"who": "two words"}}])
    assert isinstance(run.error, ChannelHungUp)
    assert run.apis() == [f"uuid_audio_fork {run.call.uuid} start wss://s.example.com/a stereo 8k "
                          "'{\"who\":\"two words\"}'",
                          f"uuid_setvar {run.call.uuid} timer_name soft"]  # timer-paced hold
    assert _after_answer(run) == [("playback", "silence_stream://-1")]
    assert [c.line for c in run.call.commands if c.name == "event"] == [
        "event plain CUSTOM mod_audio_fork::connect_failed"]  # subscribed before the fork starts
    assert run.call.events_named("mod_audio_fork::connect") == []  # not subscribed: not delivered


def test_given_listen_to_plain_ws_with_defaults_when_executed_then_mixed_16k_and_empty_metadata(run_on_call):
    run = run_on_call(Call().hangup_after(0.2), [{"verb": "listen", "url": "ws://127.0.0.1:9/a"}])
    assert run.apis() == [f"uuid_audio_fork {run.call.uuid} start ws://127.0.0.1:9/a mixed 16k {{}}",
                          f"uuid_setvar {run.call.uuid} timer_name soft"]


def test_given_listen_when_the_websocket_connect_fails_later_then_call_ends_with_reason_and_event(
        run_on_call, owner_conn):
    reason = "server's cert didn't look good, tls=invalidca X509_V_ERR = 18"
    run = run_on_call(Call(listen_fails=reason).hangup_after(5.0),
                      [{"verb": "listen", "url": "wss://s.example.com/a"}])
    assert isinstance(run.error, ChannelHungUp)  # we hung up: the listen cannot stream
    assert run.ctx.hangup_reason == f"listen_failed: {reason}"
    (key, body), = run.events(owner_conn)
    assert key == "interaction.listen.failed"
    assert (body["payload"]["reply"], body["payload"]["url"]) == (reason, "wss://s.example.com/a")


def test_given_listen_when_fork_is_refused_then_list_ends_with_the_reply(run_on_call, owner_conn):
    def attach_first(ctx):
        ctx.api(f"uuid_audio_fork {ctx.call_id} start wss://other.example.com/x mono 8k")
        from app.verbs.listen import Listen
        return Listen(Listen.schema().load({"verb": "listen", "url": "wss://s.example.com/a"})).execute(ctx)

    run = run_on_call(Call(), attach_first)
    assert (run.outcome.reason, run.outcome.data["reply"]) == ("listen_failed", "-ERR Operation Failed")
    assert [k for k, _ in run.events(owner_conn)] == ["interaction.listen.failed"]


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
    from app.verbs import VerbListRejected

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
        ("play_and_detect_speech", "say:Say sales or support detect:pocketsphinx {no-input-timeout=5000}gather")]
    assert json.loads(hook_server.requests[0].body)["speech"] == ""
    assert run.setvars() == [("tts_engine", "flite"), ("tts_voice", "kal")]
    assert run.outcome.reason == "no_instructions"


def test_given_speech_gather_when_recognised_then_hook_gets_the_text_and_detect_in_text_cannot_split(
        run_on_call, hook_server):
    hook_server.reply(Reply(body=b""))
    run = run_on_call(Call(speech="sales"), [{"verb": "gather", "input": ["speech"],
                                              "say": {"text": "Say detect: sales", "voice": "slt"},
                                              "actionHook": hook_server.url("/speech")}])
    assert _after_answer(run) == [
        ("play_and_detect_speech", "say:Say detect : sales detect:pocketsphinx {no-input-timeout=5000}gather")]
    assert json.loads(hook_server.requests[0].body)["speech"] == "sales"
    assert run.call.refused_prompts == []


@pytest.mark.parametrize("prompt", ["'say:flite:kal:Say sales'", "say:Say sales"])
def test_given_speech_prompts_freeswitch_cannot_play_when_simulated_then_refused_like_the_switch(
        run_on_call, prompt):
    run = run_on_call(Call(speech="sales"), lambda ctx: ctx.execute(
        "play_and_detect_speech", f"{prompt} detect:pocketsphinx gather"))
    if prompt.startswith("'"):  # a quoted prompt is a file name with quotes: ERROR, nothing heard
        assert run.outcome.get("Application-Response") == "ERROR"
    else:  # say: without tts_engine/tts_voice: "Invalid Args", silent, recognition still runs
        assert run.call.refused_prompts == [prompt]


@pytest.mark.parametrize("prompt", ["'say:flite:kal:Press one'", "'say:Press one'"])
def test_given_say_prompt_without_tts_variables_when_gathering_then_refused_but_digits_read(run_on_call, prompt):
    run = run_on_call(Call().press("1"), lambda ctx: ctx.execute(
        "play_and_get_digits", f"1 1 1 3000 # {prompt} silence_stream://250 d [0-9]+"))
    assert run.call.refused_prompts == [prompt.strip("'")]
    assert run.outcome.variable("d") == "1"


def test_given_switch_without_tone_stream_when_gathering_with_no_prompt_then_returns_at_once_with_nothing(
        run_on_call):
    gather = Gather(Gather.schema().load({"verb": "gather", "numDigits": 1}))
    run = run_on_call(Call(missing_modules=frozenset({"mod_tone_stream"})).press("1"), gather.collect)
    assert run.outcome.digits == ""
    assert run.call.take_presses() == [("1", 0.05, 0.02)]  # the digit was never read


def test_given_two_gathers_when_only_the_first_gets_digits_then_the_second_reports_none(run_on_call, hook_server):
    hook_server.reply(Reply.json([{"verb": "gather", "numDigits": 1, "actionHook": hook_server.url("/second")}]),
                      Reply(body=b""))
    run_on_call(Call().press("7"), [{"verb": "gather", "numDigits": 1, "actionHook": hook_server.url("/first")}])
    first, second = (json.loads(r.body)["digits"] for r in hook_server.requests)
    assert (first, second) == ("7", "")


@pytest.mark.parametrize(("presses", "said", "digits", "speech", "reason"), [
    ("4#", "", "4", "", "finishOnKey"),
    ("#", "", "", "", "finishOnKey"),   # an empty entry, told apart from a timeout
    ("", "", "", "", "timeout"),
    ("", "sales", "", "sales", "speech"),  # recognised by the speech gather (the simulator's result)
])
def test_the_action_hook_is_told_why_the_gather_returned(run_on_call, hook_server, presses, said, digits, speech,
                                                         reason):
    hook_server.reply(Reply.json([{"verb": "hangup"}]))
    call = Call(speech=said).press(presses) if presses else Call(speech=said)
    gather = {"verb": "gather", "timeout": 1, "actionHook": hook_server.url("/menu")}
    if said:
        gather["input"] = ["speech"]
    run_on_call(call, [gather])
    (request,) = hook_server.requests
    body = json.loads(request.body)
    assert (body["digits"], body["speech"], body["reason"]) == (digits, speech, reason)


def test_a_finish_key_pressed_in_an_earlier_gather_does_not_make_a_later_timeout_an_empty_entry(
        run_on_call, hook_server):
    hook_server.reply(Reply.json([{"verb": "gather", "timeout": 1, "actionHook": hook_server.url("/second")}]),
                      Reply(body=b""))
    run_on_call(Call().press("5#"), [{"verb": "gather", "timeout": 1, "actionHook": hook_server.url("/first")}])
    first, second = (json.loads(r.body)["reason"] for r in hook_server.requests)
    assert (first, second) == ("finishOnKey", "timeout")


def test_given_pocketsphinx_nlsml_when_parsed_then_first_input_text():
    from app.verbs.gather import parse_speech

    nlsml = ('<?xml version="1.0"?><result grammar="gather"><interpretation grammar="gather" '
             'confidence="91"><input mode="speech">sales</input></interpretation></result>')
    assert parse_speech(nlsml) == "sales"
    assert parse_speech("") == ""
    no_input = ('<?xml version="1.0"?>\n<result grammar="gather">\n  <interpretation>\n'
                '    <input mode="speech"><noinput/></input>\n  </interpretation>\n</result>\n')
    assert parse_speech(no_input) == ""
