"""OutboundConnection against the simulator over real TCP sockets."""
from __future__ import annotations

import contextlib
import time

import gevent
import gevent.event

from esl.errors import ChannelHungUp, CommandTimeout, ConnectionLost
from esl.outbound import OutboundConnection
from tests.plugins.eventually import eventually
from tests.simulator import Call

TONE = "tone_stream://%(1000,0,440)"


def run(outbound_server, simulate_call, scenario, app, *, timeout=10.0, **server_kw):
    """Run ``app(conn, res)`` for one simulated call; return (res, simulated call)."""
    res: dict = {}
    finished = gevent.event.Event()

    def wrapper(conn: OutboundConnection) -> None:
        res["conn"] = conn
        try:
            app(conn, res)
        except BaseException as exc:  # recorded for the test to assert on
            res["error"] = exc
        finally:
            finished.set()

    server = outbound_server(wrapper, **server_kw)
    call = simulate_call(scenario, server)
    assert finished.wait(timeout), "application did not finish"
    call.wait(timeout)
    return res, call


def _prologue(conn: OutboundConnection) -> None:
    conn.connect()
    conn.myevents()
    conn.linger()


def test_given_simulated_call_when_answer_playback_hangup_then_each_execute_returns_its_completion(
        outbound_server, simulate_call):
    def app(conn, res):
        res["data"] = conn.connect()
        conn.myevents()
        conn.linger()
        res["answer"] = conn.execute("answer")
        res["playback"] = conn.execute("playback", TONE)
        conn.hangup("NORMAL_CLEARING")
        res["complete"] = conn.wait_hangup_complete(timeout=5)
        # the linger notice follows CHANNEL_HANGUP_COMPLETE
        res["lingering"] = eventually(lambda: conn.lingering, timeout=5, what="the linger notice")
        conn.exit()

    res, call = run(outbound_server, simulate_call, Call(caller="15551230000", callee="15557650000").media(TONE, 0.05), app)
    assert "error" not in res, res.get("error")
    data = res["data"]
    assert data.get("Caller-Caller-ID-Number") == "15551230000"
    assert data.get("Caller-Destination-Number") == "15557650000"
    assert data.get("Reply-Text") == "+OK\n"
    assert res["conn"].uuid == call.uuid
    assert res["answer"].get("Application") == "answer"
    assert res["answer"].get("Application-Response") == "_none_"
    assert res["playback"].get("Application-Response") == "FILE PLAYED"
    assert res["playback"].get("Application-Data") == TONE
    assert res["complete"].get("Hangup-Cause") == "NORMAL_CLEARING"
    assert res["complete"].variable("sip_hangup_disposition") == "send_bye"
    assert res["lingering"] is True
    assert [c.name for c in call.commands] == ["connect", "myevents", "linger", "sendmsg", "sendmsg", "sendmsg", "exit"]
    assert call.commands[3].app == "answer"
    assert call.commands[4].app_arg == TONE
    assert call.commands[5].headers["call-command"] == "hangup"
    # the Event-UUID we sent is the Application-UUID we matched
    assert res["playback"].get("Application-UUID") == call.commands[4].headers["Event-UUID"]


def test_given_two_executes_in_flight_when_completions_arrive_then_each_is_matched_by_application_uuid(
        outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        first = conn.execute_async("playback", "one.wav")
        second = conn.execute_async("playback", "two.wav")
        # wait for the second first: matching must not depend on order or on the app name
        res["second"] = conn.wait_execute(second, timeout=5)
        res["first"] = conn.wait_execute(first, timeout=5)
        res["ids"] = (first, second)
        conn.hangup()

    res, _ = run(outbound_server, simulate_call, Call().media("one.wav", 0.05).media("two.wav", 0.05), app)
    assert "error" not in res, res.get("error")
    first, second = res["ids"]
    assert res["first"].get("Application-UUID") == first
    assert res["first"].get("Application-Data") == "one.wav"
    assert res["second"].get("Application-UUID") == second
    assert res["second"].get("Application-Data") == "two.wav"


def test_given_caller_hangs_up_during_playback_when_executing_then_channel_hung_up_is_raised_at_once(
        outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        conn.execute("answer")
        started = time.monotonic()
        try:
            conn.execute("playback", "long.wav")
        except ChannelHungUp as exc:
            res["hangup"] = exc
            res["elapsed"] = time.monotonic() - started
            res["hung_up"] = conn.hung_up
        conn.exit()

    scenario = Call().media("long.wav", 30.0).hangup_after(0.3)
    res, call = run(outbound_server, simulate_call, scenario, app)
    assert "error" not in res, res.get("error")
    exc = res["hangup"]
    assert exc.cause == "NORMAL_CLEARING"
    assert exc.event.name == "CHANNEL_HANGUP"
    assert res["hung_up"] is True
    # raised on CHANNEL_HANGUP, long before the 30 s media would have ended
    assert res["elapsed"] < 10
    names = [e.dispatch_key for e in call.emitted]
    assert names.index("CHANNEL_HANGUP") < max(i for i, e in enumerate(call.emitted)
                                                if e.get("Application") == "playback")
    playback_done = [e for e in call.emitted if e.name == "CHANNEL_EXECUTE_COMPLETE" and e.get("Application") == "playback"]
    assert playback_done[0].get("Application-Response") == "PLAYBACK ERROR"


def test_given_channel_already_hung_up_when_execute_then_raises_without_sending(outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        conn.execute("answer")
        conn.hangup()
        conn.wait_hangup_complete(timeout=5)
        try:
            conn.execute("playback", TONE)
        except ChannelHungUp as exc:
            res["raised"] = exc
        conn.exit()

    res, call = run(outbound_server, simulate_call, Call(), app)
    assert isinstance(res.get("raised"), ChannelHungUp)
    assert [c.app for c in call.commands if c.name == "sendmsg"] == ["answer", None]


def test_given_raise_on_hangup_false_when_bridge_fails_then_completion_with_disposition_is_returned(
        outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        conn.execute("answer")
        res["bridge"] = conn.execute("bridge", "sofia/gateway/gw1/15557650000", raise_on_hangup=False)
        res["hangup"] = conn.hangup_event
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call().bridge_fails("NORMAL_TEMPORARY_FAILURE"), app)
    assert "error" not in res, res.get("error")
    assert res["bridge"].variable("originate_disposition") == "NORMAL_TEMPORARY_FAILURE"
    assert res["hangup"].get("Hangup-Cause") == "NORMAL_TEMPORARY_FAILURE"


def test_given_bridge_fails_with_continue_on_fail_then_caller_stays_up_and_failure_is_in_variables(
        outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        conn.execute("answer")
        conn.execute("set", "continue_on_fail=true")
        res["bridge"] = conn.execute("bridge", "sofia/gateway/gw1/15557650000")
        res["after"] = conn.execute("playback", TONE)
        conn.hangup()
        conn.wait_hangup_complete(timeout=5)
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call().bridge_fails("USER_BUSY", "486"), app)
    assert "error" not in res, res.get("error")
    assert res["bridge"].variable("DIALSTATUS") == "USER_BUSY"
    assert res["bridge"].get("Answer-State") == "answered"
    assert res["after"].get("Application-Response") == "FILE PLAYED"


def test_given_gather_when_caller_presses_digits_then_variable_holds_digits_without_terminator(
        outbound_server, simulate_call):
    dtmf = []

    def app(conn, res):
        _prologue(conn)
        conn.on("DTMF", lambda ev: dtmf.append(ev.get("DTMF-Digit")))
        conn.execute("answer")
        res["gather"] = conn.execute(
            "play_and_get_digits", r"1 4 1 5000 # tone_stream://%(200,0,800) silence_stream://250 pagd_digits \d+")
        eventually(lambda: len(dtmf) == 4, timeout=5, what="the four DTMF events reached the handler")
        conn.hangup()
        conn.exit()

    res, call = run(outbound_server, simulate_call, Call().press("123#", after=0.05), app)
    assert "error" not in res, res.get("error")
    assert res["gather"].variable("pagd_digits") == "123"
    assert res["gather"].variable("read_result") == "success"
    assert dtmf == ["1", "2", "3", "#"]
    pagd = [c for c in call.commands if c.app == "play_and_get_digits"][0]
    assert pagd.app_arg.split()[7] == "pagd_digits"


def test_given_multiline_argument_when_execute_then_it_travels_as_a_body(outbound_server, simulate_call):
    text = "line one\nline two"

    def app(conn, res):
        _prologue(conn)
        res["speak"] = conn.execute("speak", text)
        conn.hangup()
        conn.exit()

    res, call = run(outbound_server, simulate_call, Call(), app)
    assert "error" not in res, res.get("error")
    cmd = [c for c in call.commands if c.app == "speak"][0]
    assert "execute-app-arg" not in cmd.headers
    assert cmd.body == text


def test_given_stalled_switch_when_command_has_timeout_then_command_timeout_is_raised(
        outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        gevent.sleep(0.2)  # scenario: past the stall fault the simulator fires at 0.1 s
        try:
            conn.api("uuid_getvar x y", timeout=0.2)
        except CommandTimeout as exc:
            res["timeout"] = exc
        res["connected"] = conn.connected

    res, _ = run(outbound_server, simulate_call, Call().fault("stall", at=0.1), app)
    assert isinstance(res.get("timeout"), CommandTimeout)
    assert res["connected"] is True  # a timeout does not kill the connection


def test_given_pending_commands_when_connection_drops_then_they_fail_at_once(outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        gevent.sleep(0.15)  # scenario: inside the stall (from 0.1 s), before the drop at 0.5 s
        started = time.monotonic()
        waiters = [gevent.spawn(conn.api, "uuid_getvar a b", timeout=30),
                   gevent.spawn(conn.execute, "playback", TONE)]
        gevent.joinall(waiters, timeout=20)
        res["errors"] = [g.exception for g in waiters]
        res["elapsed"] = time.monotonic() - started

    res, _ = run(outbound_server, simulate_call, Call().fault("stall", at=0.1).fault("drop", at=0.5), app)
    assert all(isinstance(e, ConnectionLost) for e in res["errors"]), res["errors"]
    assert res["elapsed"] < 20  # failed on the disconnect, not on the 30 s command timeout


def test_given_handler_raises_when_events_arrive_then_reader_keeps_working(outbound_server, simulate_call):
    seen = []

    def boom(ev):
        raise RuntimeError("handler bug")

    def app(conn, res):
        _prologue(conn)
        conn.on("CHANNEL_EXECUTE", boom)
        conn.on("CHANNEL_EXECUTE_COMPLETE", lambda ev: seen.append(ev.get("Application")))
        conn.execute("answer")
        res["pb"] = conn.execute("playback", TONE)
        res["errors"] = eventually(lambda: conn.handler_errors >= 2 and conn.handler_errors, timeout=5,
                                   what="both CHANNEL_EXECUTE events reached the raising handler")
        conn.hangup()
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call(), app)
    assert "error" not in res, res.get("error")
    assert res["pb"].get("Application-Response") == "FILE PLAYED"
    assert res["errors"] == 2  # answer and playback
    assert seen[:2] == ["answer", "playback"]


def test_given_slow_handler_when_queue_overflows_then_reader_continues_and_drops_are_counted(
        outbound_server, simulate_call):
    def slow(ev):
        gevent.sleep(2)  # scenario: a handler far slower than the events arrive

    def app(conn, res):
        _prologue(conn)
        conn.on("*", slow)
        conn.execute("answer")
        for _ in range(3):
            conn.execute("playback", TONE)
        res["dropped"] = conn.dropped_events
        conn.hangup()
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call(), app, queue_size=2)
    assert "error" not in res, res.get("error")
    assert res["dropped"] > 0


def test_given_linger_seconds_when_caller_hangs_up_then_switch_closes_after_final_notice(
        outbound_server, simulate_call):
    def app(conn, res):
        conn.connect()
        conn.myevents()
        conn.linger(1)
        conn.execute("answer")
        with contextlib.suppress(ChannelHungUp):  # the caller hangs up during the playback
            conn.execute("playback", "long.wav")
        res["closed"] = conn.wait_closed(timeout=5)
        res["notice"] = conn.disconnect_notice.headers.get("Content-Disposition")
        res["linger"] = conn.linger_notice.get("Linger-Time")

    scenario = Call().media("long.wav", 30).hangup_after(0.2)
    scenario.timing.linger_scale = 0.1
    res, call = run(outbound_server, simulate_call, scenario, app)
    assert "error" not in res, res.get("error")
    assert res["closed"] is True
    assert res["notice"] == "disconnect"
    assert res["linger"] == "1"
    assert [c.line for c in call.commands][2] == "linger 1"


def test_given_record_session_when_subscribed_then_record_start_and_stop_arrive(outbound_server, simulate_call):
    names = []

    def app(conn, res):
        _prologue(conn)
        conn.subscribe("RECORD_START", "RECORD_STOP")
        conn.on("RECORD_START", lambda ev: names.append(("start", ev.get("Record-File-Path"))))
        conn.on("RECORD_STOP", lambda ev: names.append(("stop", ev.variable("record_completion_cause"))))
        conn.execute("answer")
        conn.execute("set", "RECORD_STEREO=true")
        conn.execute("record_session", "/var/spool/fs/rec/abc.wav")
        conn.execute("playback", TONE)
        conn.hangup()
        conn.wait_hangup_complete(timeout=5)
        eventually(lambda: ("stop", "success-silence") in names, timeout=5, what="RECORD_STOP reached the handler")
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call(), app)
    assert "error" not in res, res.get("error")
    assert names == [("start", "/var/spool/fs/rec/abc.wav"), ("stop", "success-silence")]


def test_given_uuid_setvar_when_set_var_then_variable_is_set_on_the_channel(outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        conn.set_var("sbc_trace_id", "abc 123")
        res["value"] = conn.api(f"uuid_getvar {conn.uuid} sbc_trace_id")
        res["unknown"] = conn.api("nosuchcommand foo")
        conn.hangup()
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call(), app)
    assert "error" not in res, res.get("error")
    assert res["value"] == "abc 123"
    assert res["unknown"] == "-ERR nosuchcommand Command not found!\n"


def test_given_caller_holds_and_resumes_when_subscribed_then_hold_events_and_accumulated_hold_vars_arrive(
        outbound_server, simulate_call):
    seen = []

    def app(conn, res):
        _prologue(conn)
        conn.subscribe("CHANNEL_HOLD", "CHANNEL_UNHOLD")  # not on the myevents list
        conn.on("CHANNEL_HOLD", lambda ev: seen.append(("hold", ev.get("Channel-Call-State"))))
        conn.on("CHANNEL_UNHOLD", lambda ev: seen.append(("unhold", ev.variable("hold_accum_ms"))))
        conn.execute("answer")
        conn.wait_for("CHANNEL_UNHOLD", timeout=5)
        conn.hangup()
        res["complete"] = conn.wait_hangup_complete(timeout=5)
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call().hold(at=0.1, duration=0.2), app)
    assert "error" not in res, res.get("error")
    assert seen[0] == ("hold", "HELD")
    assert seen[1][0] == "unhold" and int(seen[1][1]) >= 150
    assert int(res["complete"].variable("hold_accum_ms")) >= 150


def test_given_dtmf_outside_a_gather_when_injected_then_dtmf_events_reach_handlers(outbound_server, simulate_call):
    digits = []

    def app(conn, res):
        _prologue(conn)
        conn.on("DTMF", lambda ev: digits.append(ev.get("DTMF-Digit")))
        conn.execute("answer")
        conn.execute("sleep", "300")
        conn.hangup()
        conn.exit()

    res, _ = run(outbound_server, simulate_call, Call().dtmf("9*", at=0.1), app)
    assert "error" not in res, res.get("error")
    assert digits == ["9", "*"]


def test_given_garbage_on_the_wire_when_reading_then_connection_is_dropped_and_pending_execute_fails(
        outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        try:
            conn.execute("playback", "long.wav", timeout=10)
        except ConnectionLost as exc:
            res["lost"] = exc
        res["reason"] = str(conn.close_reason)

    res, _ = run(outbound_server, simulate_call, Call().media("long.wav", 30).fault("garbage", at=0.2), app)
    assert isinstance(res.get("lost"), ConnectionLost)
    assert "protocol error" in res["reason"]


def test_given_conference_subscription_when_caller_joins_and_leaves_then_member_events_arrive_by_subclass(
        outbound_server, simulate_call):
    actions = []

    def app(conn, res):
        _prologue(conn)
        conn.subscribe("conference::maintenance")
        conn.on("conference::maintenance", lambda ev: actions.append((ev.get("Action"), ev.get_all("Conference-Name"))))
        conn.execute("answer")
        with contextlib.suppress(ChannelHungUp):  # the caller's hangup is what ends the conference
            conn.execute("conference", "room7@default")
        conn.wait_hangup_complete(timeout=5)
        eventually(lambda: any(a == "del-member" for a, _ in actions), timeout=5,
                   what="conference del-member reached the handler")
        conn.exit()

    res, call = run(outbound_server, simulate_call, Call().hangup_after(0.3), app)
    assert "error" not in res, res.get("error")
    assert "event plain CUSTOM conference::maintenance" in [c.line for c in call.commands]
    assert actions == [("add-member", ["room7"]), ("floor-change", ["room7", "room7"]), ("del-member", ["room7"])]


def test_given_simulated_call_when_controller_executes_then_simulator_records_app_and_args(
        outbound_server, simulate_call):
    def app(conn, res):
        _prologue(conn)
        conn.execute("answer")
        conn.execute("playback", TONE)
        conn.hangup()
        conn.exit()

    res, call = run(outbound_server, simulate_call, Call(), app)
    assert "error" not in res, res.get("error")
    assert call.executed() == [("answer", ""), ("playback", TONE)]
    assert call.executed("playback") == [("playback", TONE)]
    assert [e.get("Hangup-Cause") for e in call.events_named("CHANNEL_HANGUP")] == ["NORMAL_CLEARING"]
