"""An attended transfer between two browser agents on the real switch (issue 24): Debian's
baresip calls a queue over the trunk profile (a sweep every second, what it hears dumped to a
WAV); chromium agent A (the SDK's example page, tests/sdk/browser.py) takes the call, consults
chromium agent B (``call.consult({type: 'agent'})``), B accepts the consultation's ``offer`` (kind
``consult``) with the SDK's public ``offer.accept()``, A completes, B has the call (``connected``)
and hangs it up with ``call.hangup()``.

What a user hears: after the completion the caller hears B (the fake microphone's beeps) every
second, and B hears the caller (its sweep) every second; A's call ended with cause
``transferred``. What the platform says: ``call.transferred`` (``attended``, by A), the call
record's segments A (transferred) then B, the summary's transfer_count 1.
"""
from __future__ import annotations

import math
import os
import time
import uuid

import pytest

from tests.plugins.eventually import eventually
from tests.realswitch.provision import poll
from tests.realswitch.softphones import baresip_available, second_rms, sweep_wav
from tests.realswitch.test_agent_sdk_browser import (  # noqa: F401  (example_server, web_queue: fixtures)
    PASSWORD,
    _web_agent,
    example_server,
    web_queue,
)
from tests.sdk.browser import BrowserAgent, missing_reason

TALK_SECONDS = 5            # the caller and B talk this long after the completion
SPEECH_RMS = 300            # int16 RMS of a second with speech-level audio (~ -40 dBFS); silence is < 10
BROWSER_SPEECH_LEVEL = 0.01  # the same on WebRTC's 0..1 audio level scale

_MISSING = missing_reason() or baresip_available()
if _MISSING and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI=true and the browser attended transfer test cannot run: {_MISSING}")
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=f"browser attended transfer test skipped: {_MISSING}")


def _browser(server, logdir, tenant, real_switch, queue_id: str) -> tuple[BrowserAgent, dict]:
    name, agent, sip = _web_agent(tenant, real_switch, queue_id)
    browser = BrowserAgent(server.url(tenant.subdomain), name, PASSWORD, sip=sip,
                           wss_url=f"wss://127.0.0.1:{real_switch.ports.agent_wss}", logdir=logdir)
    return browser, agent


def _level(before: dict, after: dict) -> float:
    """The RMS level (0..1) of what the browser played between two `stats` answers."""
    span = after["totalSamplesDuration"] - before["totalSamplesDuration"]
    return math.sqrt((after["totalAudioEnergy"] - before["totalAudioEnergy"]) / span) if span else 0.0


def test_a_browser_agent_consults_another_browser_agent_and_completes_and_the_caller_talks_with_the_second(
        tenant, real_switch, web_queue, example_server, softphones, realswitch_workdir):  # noqa: F811
    server, logdir = example_server
    folder = realswitch_workdir / f"browser-attxfer-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    # B in a queue of its own: the caller is offered to A only
    other_queue = tenant.admin.post("/api/queues", {"name": f"web-b-{uuid.uuid4().hex[:6]}", "wrap_up_seconds": 0})
    a, agent_a = _browser(server, logdir, tenant, real_switch, web_queue["id"])
    b, agent_b = _browser(server, logdir, tenant, real_switch, other_queue["id"])
    number = tenant.number_for([{"verb": "queue", "name": web_queue["name"]}])
    b_levels: list[float] = []
    try:
        a.expect("ready", timeout=60)
        b.expect("ready", timeout=60)
        caller = softphones.baresip("caller", source=sweep_wav(folder, 120))
        caller.dial(f"sip:{number}@127.0.0.1:{real_switch.ports.sip}")
        established = caller.wait_established()["at"]
        call_id = a.command("take", "connected")["offerId"]
        started = time.monotonic()
        ack = a.command("consult", "ack", agentId=agent_b["id"])
        assert ack["ok"], ack
        answered = b.command("answerConsult", "answered")  # the offer, through the page's Accept
        assert (answered["kind"], answered["fromAgentId"], answered["offerId"]) == ("consult", agent_a["id"], call_id), answered
        before = eventually(lambda: b.command("stats", "stats")["inbound"], timeout=10,
                            what="A's first RTP packet at B")
        time.sleep(1)  # scenario: A and B talk one second before A completes
        consult_level = _level(before, b.command("stats", "stats")["inbound"])
        # refused consult_not_answered until the switch saw B's answer
        eventually(lambda: a.command("completeTransfer", "ack")["ok"], timeout=15, what="the transfer completed")
        completed = time.monotonic()
        a_ended = a.command("waitEnded", "ended")
        b_call = b.command("waitConnected", "connected")  # B's SDK has the caller's call now
        previous = b.command("stats", "stats")["inbound"]
        joined = time.monotonic()
        for _second in range(TALK_SECONDS):
            time.sleep(1)  # scenario: one second of talk between the caller and B, then B's level of it
            now = b.command("stats", "stats")["inbound"]
            b_levels.append(_level(previous, now))
            previous = now
        b_phases = b.command("hangup", "ended")["phases"]  # B hangs up with its SDK's call.hangup()
        caller.wait_closed(timeout=15)  # the caller gets the BYE
    finally:
        a.close()
        b.close()
        softphones.stop_all()
    # the dump starts at the answer and runs to the hang-up, a little shorter than the wall clock
    # (its whole seconds only): every whole second from B's join on
    rms = second_rms(caller.received_wav())
    heard = [round(r) for r in rms[math.ceil(joined - established):]]
    print(f"\nconsult->complete {completed - started:.2f} s (1 s of it talk); caller heard B {heard} (int16 RMS per second); "
          f"B heard A in the consultation {consult_level:.3f}, the caller after {[round(v, 3) for v in b_levels]}; A ended {a_ended}; folder {folder}")
    assert a_ended["cause"] == "transferred", a_ended
    assert b_call["callId"] == call_id and b_phases == ["connecting", "connected", "ended"], (b_call, b_phases)
    assert consult_level > BROWSER_SPEECH_LEVEL, consult_level                  # B heard A while consulted
    assert len(heard) >= TALK_SECONDS - 2 and min(heard) > SPEECH_RMS, heard  # the caller hears B
    assert min(b_levels) > BROWSER_SPEECH_LEVEL, b_levels                       # B hears the caller
    record = tenant.wait_record(number)[0]
    assert str(record["call_id"]) == call_id and str(record["agent_id"]) == agent_b["id"]
    [moved] = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call_id]
    assert (moved["kind"], moved["from"], moved["to"], moved["by"]["agentId"]) == (
        "attended", {"agentId": agent_a["id"]}, {"type": "agent", "agentId": agent_b["id"]}, agent_a["id"])
    details = poll(lambda: (lambda d: d if len(d["segments"]) == 2 and d["summary"] else None)(
        tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)
    assert details, "the record never had two segments and a summary"
    assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [
        (agent_a["id"], True), (agent_b["id"], False)]
    assert details["summary"]["transfer_count"] == 1
