"""The agent SDK in a real browser on the real switch: Debian's chromium (fake microphone)
loads the example softphone page, logs in through the API, registers its WebRTC leg on the
``internal`` profile over WSS with the agent's generated SIP credentials, goes available, is
offered a sipp caller from the queue, accepts, and talks: RTP flows both ways (the browser's
getStats and the switch's mediaStats of both legs), DTLS-SRTP, then the agent hangs up and
the call ends for the caller too. tests/sdk/browser.py leads the browser (driver.js)."""
from __future__ import annotations

import json
import os
import time
import uuid

import pytest

from tests.realswitch.provision import poll
from tests.sdk.browser import BrowserAgent, ExampleServer, missing_reason

PASSWORD = "browser-agent-pass-1"
_MISSING = missing_reason()
if _MISSING and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI=true and the agent SDK browser test cannot run: {_MISSING}")
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=f"agent SDK browser test skipped: {_MISSING}")


def _media_stats(real_switch, uuid_: str) -> dict[str, int]:
    """RTP packets in and out of one leg as the switch counts them (mod_commands' mediaStats:
    ``response.audio.in_packet_count`` / ``out_packet_count`` since the leg started)."""
    reply = real_switch.api('json {"command":"mediaStats","data":{"uuid":"%s"}}' % uuid_, check=False)
    try:
        audio = (json.loads(reply).get("response") or {}).get("audio") or {}
    except ValueError:
        raise AssertionError(f"mediaStats {uuid_}: {reply[:300]}") from None
    return {"in": int(audio.get("in_packet_count") or 0), "out": int(audio.get("out_packet_count") or 0)}


def _delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in ("in", "out")}


def _other_leg(real_switch, caller_uuid: str) -> str:
    rows = json.loads(real_switch.api("show channels as json", check=False) or "{}").get("rows") or []
    others = [r["uuid"] for r in rows if r.get("uuid") != caller_uuid]
    assert len(others) == 1, rows
    return others[0]


def _web_agent(tenant, real_switch, queue_id: str) -> tuple[str, dict, dict]:
    name = f"web-{uuid.uuid4().hex[:6]}"
    user = tenant.admin.post("/api/users", {"username": name, "password": PASSWORD, "role": "agent"})
    agent = tenant.admin.post("/api/agents", {"user_id": user["id"], "queue_ids": [queue_id]})
    sip = tenant.admin.post(f"/api/agents/{agent['id']}/sip-credentials", None)
    assert poll(lambda: real_switch.api(f"user_exists id {sip['sip_username']} {sip['sip_domain']}",
                                        check=False).strip() == "true", 15), "directory not applied"
    return name, agent, sip


@pytest.fixture
def web_queue(tenant):
    """A queue with a 15 s offer and no after-call work."""
    return tenant.admin.post("/api/queues", {"name": f"web-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 15,
                                             "wrap_up_seconds": 0, "announce_position": False})


@pytest.fixture
def example_server(product, realswitch_workdir):
    logdir = realswitch_workdir / "sdk"
    logdir.mkdir(exist_ok=True)
    server = ExampleServer(product.api_port, logdir)
    yield server, logdir
    server.stop()


@pytest.fixture
def browser_agent(tenant, real_switch, web_queue, example_server):
    """An agent with SIP credentials on the switch and chromium logged in on the example page."""
    server, logdir = example_server
    name, agent, sip = _web_agent(tenant, real_switch, web_queue["id"])
    browser = BrowserAgent(server.url(tenant.subdomain), name, PASSWORD, sip=sip,
                           wss_url=f"wss://127.0.0.1:{real_switch.ports.agent_wss}", logdir=logdir)
    try:
        browser.expect("ready", timeout=60)
        yield browser, web_queue, agent
    finally:
        browser.close()


def test_a_browser_agent_takes_a_queued_sipp_caller_and_audio_flows_both_ways_over_dtls_srtp(
        browser_agent, tenant, sipp, real_switch):
    browser, queue, agent = browser_agent
    number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
    caller = sipp.start_calls(number, codec="PCMA", scenario="uac-talk-until-bye.xml")
    try:
        connected = browser.command("take", "connected")
        caller_leg = connected["offerId"]
        agent_leg = _other_leg(real_switch, caller_leg)
        caller_at_connect = _media_stats(real_switch, caller_leg)
        agent_at_connect = _media_stats(real_switch, agent_leg)
        time.sleep(3)  # scenario: three seconds of talk
        stats = browser.command("stats", "stats")
        caller_rtp = _delta(_media_stats(real_switch, caller_leg), caller_at_connect)
        agent_rtp = _delta(_media_stats(real_switch, agent_leg), agent_at_connect)
        ended = browser.command("hangup", "ended")
    finally:
        result = caller.wait(60)
    assert result.ok, result.errors or result.stdout[-1500:]  # the caller got the BYE
    assert ended["phases"] == ["connecting", "connected", "ended"]
    # the browser leg: DTLS-SRTP, packets both ways
    # (FreeSWITCH writes RTP/SAVPF with a DTLS fingerprint for WebRTC legs; the SDK refuses RTP/AVP)
    assert stats["remoteSdpProto"] in ("RTP/SAVPF", "UDP/TLS/RTP/SAVPF"), stats
    assert stats["dtls"] == "connected" and stats["srtp"], stats
    assert stats["inbound"]["packetsReceived"] > 10, stats   # sipp's speech reached the browser
    assert stats["outbound"]["packetsSent"] > 10, stats      # the fake microphone went out
    # the switch's view of both legs during the 3 s of talk: from and to the sipp caller, from
    # and to the browser (20-30 ms packets: ~100-150 each way on an idle machine; a loaded one
    # sends fewer, so the bar is only "audio flows")
    print(f"\nbrowser {stats}\ncaller leg {caller_rtp}, agent leg {agent_rtp}")
    assert caller_rtp["in"] > 10 and caller_rtp["out"] > 10, (caller_rtp, agent_rtp)
    assert agent_rtp["in"] > 10 and agent_rtp["out"] > 10, (caller_rtp, agent_rtp)
    record = tenant.wait_record(number)[0]
    assert str(record["agent_id"]) == agent["id"] and str(record["queue_id"]) == queue["id"]


def test_a_browser_agent_holds_and_resumes_a_call_and_audio_flows_again(browser_agent, tenant, sipp, real_switch):
    browser, queue, _agent = browser_agent
    number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
    caller = sipp.start_calls(number, codec="PCMA", scenario="uac-talk-until-bye.xml")
    try:
        browser.command("take", "connected")
        browser.command("hold", "media")    # uuid_hold: the switch re-INVITEs the WebRTC leg
        time.sleep(2)  # scenario: the caller hears the hold music meanwhile
        browser.command("unhold", "media")
        resumed = browser.command("stats", "stats")
        time.sleep(1)  # scenario: one second of audio after the resume, counted below
        after_resume = browser.command("stats", "stats")
        ended = browser.command("hangup", "ended")
    finally:
        result = caller.wait(60)
    assert ended["phases"] == ["connecting", "connected", "ended"]
    assert after_resume["inbound"]["packetsReceived"] > resumed["inbound"]["packetsReceived"], (resumed, after_resume)
    assert result.ok, result.errors[-1500:]  # the caller got the BYE


def test_a_browser_agent_whose_microphone_is_blocked_gets_microphone_denied_and_the_caller_goes_on(
        tenant, real_switch, web_queue, example_server, sipp):
    server, logdir = example_server
    name, _agent, sip = _web_agent(tenant, real_switch, web_queue["id"])
    browser = BrowserAgent(server.url(tenant.subdomain), name, PASSWORD, sip=sip,
                           wss_url=f"wss://127.0.0.1:{real_switch.ports.agent_wss}", logdir=logdir,
                           deny_microphone=True)
    number = tenant.number_for([{"verb": "queue", "name": web_queue["name"]}])
    try:
        browser.expect("ready", timeout=60)
        caller = sipp.start_calls(number, codec="PCMA", scenario="uac-bye-after.xml", extra=("-d", "8000"))
        denied = browser.command("acceptDenied", "denied")
    finally:
        browser.close()
    result = caller.wait(60)
    assert "microphone_denied" in denied["errors"], denied
    assert denied["phases"][-1] == "ended", denied
    assert result.ok, result.errors[-1500:]  # the caller was kept in the queue and hung up itself
