"""Real softphones against the real switch (softphones.py): what a caller *hears*.

Debian's baresip 1.0 and linphonec 5.1 decode what they receive and write it to WAV; each test
asserts the figure a user cares about — received audio that is speech, not silence, lasting
as long as the call — where sipp could only prove that packets flowed.
"""
from __future__ import annotations

import json
import time
import uuid

from tests.plugins.eventually import eventually
from tests.plugins.webhook_server import Reply
from tests.realswitch import agents as sip_agents
from tests.realswitch.softphones import AudioFigures, BaresipAccount, measure_wav, tone_wav

SENTENCE = ("Thank you for calling. This sentence is spoken by the switch so that a real "
            "softphone can prove it heard the whole of it, from the first word to the last.")
SPEECH_DBFS = -40.0          # speech level: flite says ~ -29 dBFS, the sipp speech ~ -20; silence < -60
LENGTH_TOLERANCE_SECONDS = 0.3  # received audio vs the answered call (jitter buffer, 1st packet)
AGENT_TONE_DBFS = -12.0      # the agent phone's microphone: a 440 Hz sine at a known level
BRIDGED_TALK_SECONDS = 5.0


def _assert_heard_the_whole_sentence(phone: str, heard: AudioFigures, record: dict) -> None:
    """The caller heard SENTENCE at speech level for as long as the completed call lasted."""
    print(f"{phone} caller heard {heard} of a {record['talk_ms']} ms call")
    assert record["status"] == "completed"
    assert heard.rms_dbfs > SPEECH_DBFS, heard
    assert abs(heard.seconds - record["talk_ms"] / 1000) <= LENGTH_TOLERANCE_SECONDS, (
        heard, record["talk_ms"])
    # the sentence fills the call: speech (not silence) for most of it, up to its end
    assert heard.active_seconds >= 0.7 * heard.seconds, heard
    assert heard.last_active_second >= heard.seconds - 1.0, heard


def test_baresip_trunk_caller_hears_the_whole_spoken_sentence(tenant, real_switch, softphones):
    number = tenant.number_for([{"verb": "say", "text": SENTENCE}, {"verb": "hangup"}])
    caller = softphones.baresip("trunk-caller")
    caller.dial(f"sip:{number}@127.0.0.1:{real_switch.ports.sip}")
    caller.wait_established()
    caller.wait_closed(timeout=40)  # the application hangs up after the sentence
    record = tenant.wait_record(number)[0]
    _assert_heard_the_whole_sentence("baresip", measure_wav(caller.received_wav()), record)


def _queue(tenant, real_switch):
    """A queue (no position announcement) with one agent whose SIP credentials reached the switch."""
    queue = tenant.admin.post("/api/queues", {"name": f"sp-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 10,
                                              "wrap_up_seconds": 1, "announce_position": False})
    agent = sip_agents.new_agent(tenant, [queue["id"]], prefix="bs")
    eventually(lambda: sip_agents.in_directory(real_switch, agent), timeout=15,
               what=f"{agent.sip_username} in the switch's directory")
    return queue, agent


def test_baresip_agent_with_api_credentials_answers_a_queue_call_with_audio_both_ways(
        tenant, real_switch, softphones, realswitch_workdir):
    queue, agent = _queue(tenant, real_switch)
    # the account line docs/agents.md gives: <sip:user@subdomain>;auth_pass=…;outbound=<agent profile>
    phone = softphones.baresip("agent", source=tone_wav(realswitch_workdir, 60, dbfs=AGENT_TONE_DBFS),
                               account=BaresipAccount.agent(agent.sip_username, agent.sip_password,
                                                            agent.domain, real_switch.ports.agent_sip))
    phone.wait_registered()
    eventually(lambda: sip_agents.presence().is_registered(agent.domain, agent.sip_username),
               timeout=10, what="the product tracks the baresip registration")
    sip_agents.make_available(tenant, agent)
    number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
    caller = softphones.baresip("caller")  # speech
    caller.dial(f"sip:{number}@127.0.0.1:{real_switch.ports.sip}")
    caller.wait_established()
    phone.wait_established()  # baresip answered the offer by itself (answermode=auto)
    time.sleep(BRIDGED_TALK_SECONDS)  # the conversation being measured, not a wait for a state
    caller.hangup()
    caller.wait_closed()
    phone.wait_closed()
    record = tenant.wait_record(number)[0]
    assert str(record["agent_id"]) == agent.id and str(record["queue_id"]) == queue["id"]

    agent_heard = measure_wav(phone.received_wav())
    bridged = phone.call_seconds()
    answered_after = phone.wait_established(0.1)["at"] - caller.wait_established(0.1)["at"]
    caller_call = caller.call_seconds()
    caller_total = measure_wav(caller.received_wav())
    caller_heard = measure_wav(caller.received_wav(), start=answered_after + 0.2)
    print(f"agent heard {agent_heard} of {bridged:.2f} s bridged; caller heard {caller_total} of "
          f"{caller_call:.2f} s, after the answer ({answered_after:.2f} s in) {caller_heard}")
    # the caller's speech reached the agent for the whole bridged call
    assert agent_heard.rms_dbfs > SPEECH_DBFS, agent_heard
    assert abs(agent_heard.seconds - bridged) <= LENGTH_TOLERANCE_SECONDS, (agent_heard, bridged)
    assert agent_heard.last_active_second >= agent_heard.seconds - 1.0, agent_heard
    # the agent's tone reached the caller at its level, without gaps, once answered
    assert abs(caller_heard.rms_dbfs - AGENT_TONE_DBFS) <= 1.5, caller_heard
    assert caller_heard.active_seconds >= caller_heard.seconds - LENGTH_TOLERANCE_SECONDS, caller_heard
    assert abs(caller_total.seconds - caller_call) <= LENGTH_TOLERANCE_SECONDS, (caller_total, caller_call)


def test_baresip_caller_rfc2833_digits_reach_gather(tenant, real_switch, softphones, hook_server):
    hook_server.reply(Reply.json([{"verb": "hangup"}]))
    number = tenant.number_for([{"verb": "gather", "finishOnKey": "#", "timeout": 8,
                                 "actionHook": hook_server.url("/digits")}])
    caller = softphones.baresip("dtmf-caller")
    caller.dial(f"sip:{number}@127.0.0.1:{real_switch.ports.sip}")
    caller.wait_established()
    eventually(lambda: "play_and_get_digits" in real_switch.api("show channels"), timeout=10,
               what="the gather is reading digits")
    caller.send_dtmf("42#")
    caller.wait_closed()  # the action hook's hangup
    request = eventually(lambda: hook_server.requests, timeout=10, what="the gather's actionHook")[0]
    assert json.loads(request.body)["digits"] == "42"


def test_linphonec_trunk_caller_hears_the_whole_spoken_sentence(tenant, real_switch, softphones):
    number = tenant.number_for([{"verb": "say", "text": SENTENCE}, {"verb": "hangup"}])
    caller = softphones.linphonec("linphone-caller")
    caller.dial(f"sip:{number}@127.0.0.1:{real_switch.ports.sip}")
    caller.wait_connected()
    caller.wait_ended(timeout=40)  # the application hangs up after the sentence
    record = tenant.wait_record(number)[0]
    heard = eventually(lambda: measure_wav(caller.received_wav()), timeout=5,
                       what="linphonec's recording closed")
    _assert_heard_the_whole_sentence("linphonec", heard, record)


def test_linphonec_registers_as_an_agent_with_the_register_command_docs_show(
        tenant, real_switch, softphones):
    _queue_, agent = _queue(tenant, real_switch)
    phone = softphones.linphonec("linphone-agent", user=agent.sip_username)
    phone.register(f"sip:{agent.sip_username}@{agent.domain}",
                   f"sip:127.0.0.1:{real_switch.ports.agent_sip}", agent.sip_password)
    phone.wait_registered()
    eventually(lambda: sip_agents.presence().is_registered(agent.domain, agent.sip_username),
               timeout=10, what="the product tracks the linphonec registration")
