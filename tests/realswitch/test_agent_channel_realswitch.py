"""The agent channel on the real switch: an agent on the channel (the real ``sbc api``) rejects
an offer ringing on its sipp phone, or hangs up its answered call, and the real controller
carries it out (``call.control`` → ``uuid_kill`` / ``uuid_hold`` on the agent's leg over
inbound ESL).

What only the real switch can say: that killing the ringing agent leg with CALL_REJECTED makes
the caller's ``bridge`` fail with that cause (→ ``agent.reject``, not a miss, next agent), and
that ending the agent's answered leg ends the caller's call (``hangup_after_bridge``)."""
from __future__ import annotations

import json
import time
import uuid

import pytest

from tests.agent_channel.client import ChannelClient
from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch.provision import poll


@pytest.fixture
def channel_queue(tenant, real_switch):
    queue = tenant.admin.post("/api/queues", {"name": f"ch-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 15,
                                              "wrap_up_seconds": 1, "announce_position": False})
    agents = [sip_agents.new_agent(tenant, [queue["id"]], prefix="ch") for _ in range(2)]
    for agent in agents:
        assert poll(lambda a=agent: sip_agents.in_directory(real_switch, a), 15), "directory not applied"
    return queue, agents


def _callstate(real_switch, leg: str) -> str | None:
    """The switch's call state of channel ``leg`` (ACTIVE, HELD, ...), None once it is gone."""
    rows = json.loads(real_switch.api("show channels as json") or "{}").get("rows") or []
    return next((row.get("callstate") for row in rows if row.get("uuid") == leg), None)


def _channel(product, tenant, agent: sip_agents.SipAgent) -> ChannelClient:
    """``agent`` on the agent channel, logged in as itself."""
    client = ChannelClient(product.api_port, f"{tenant.subdomain}.localhost")
    client.auth(sip_agents.login_token(product, tenant, agent))
    return client


def test_an_agent_who_rejects_on_the_channel_is_agent_reject_not_missed_and_the_next_agent_gets_the_caller(
        product, tenant, channel_queue, sipp, real_switch):
    queue, (rejecter, answerer) = channel_queue
    phones = [sip_agents.register(sipp, real_switch, rejecter, "agent-ring-ooc.xml", seconds=40),
              sip_agents.register(sipp, real_switch, answerer, "agent-answer-ooc.xml", seconds=40)]
    client = _channel(product, tenant, rejecter)
    try:
        sip_agents.make_available(tenant, rejecter)  # longest idle: offered first
        sip_agents.make_available(tenant, answerer)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        caller = sipp.start_calls(number, scenario="uac-bye-after.xml", extra=("-d", "8000"))
        offer = client.expect("offer", timeout=20)
        ack = client.command("reject", offerId=offer["offerId"])
        assert ack["ok"] is True, ack
        withdrawn = client.expect("offer", lambda m: m["phase"] == "withdrawn", timeout=20)
        assert withdrawn["reason"] == "rejected" and withdrawn["cause"] == "CALL_REJECTED", withdrawn
        result = caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["agent_id"]) == answerer.id
        events = [e for e in tenant.events("agent.") if e["payload"].get("callId") == str(record["call_id"])]
        sequence = [(e["key"], e["payload"]["agentId"]) for e in events]
        assert sequence == [("agent.offer", rejecter.id), ("agent.reject", rejecter.id),
                            ("agent.offer", answerer.id), ("agent.accept", answerer.id)], sequence
        assert tenant.admin.get(f"/api/agents/{rejecter.id}")["state"] == "available"
    finally:
        client.close()
        results = [p.wait(60) for p in phones]
    assert "CANCEL" in results[0].messages, results[0].errors


def test_an_agent_who_holds_then_hangs_up_on_the_channel_holds_the_leg_ends_the_bridged_call_and_sees_it_ended(
        product, tenant, channel_queue, sipp, real_switch):
    queue, (agent, _other) = channel_queue
    phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-hold-ooc.xml", seconds=40)
    client = _channel(product, tenant, agent)
    try:
        sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        caller = sipp.start_calls(number, scenario="uac-wait-bye.xml")  # waits for the switch's BYE
        offer = client.expect("offer", timeout=20)
        connected = client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
        assert connected["callId"] == offer["offerId"]
        assert client.command("hold")["ok"] is True
        assert client.expect("media")["state"] == "held"
        leg = eventually(lambda: sip_agents.presence().agent_leg(str(tenant.account_id), agent.id), timeout=10,
                         what="the agent's leg in presence")[1]
        # the request reaches the switch through the outbox and a controller
        eventually(lambda: _callstate(real_switch, leg) == "HELD", timeout=10, what="the agent's leg HELD on the switch")
        assert client.command("unhold")["ok"] is True
        eventually(lambda: _callstate(real_switch, leg) == "ACTIVE", timeout=10,
                   what="the agent's leg ACTIVE again on the switch")
        assert client.command("dtmf", digits="1")["ok"] is True
        assert client.command("hangup")["ok"] is True
        result = caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]  # the caller got the BYE
        ended = client.expect("call", lambda m: m["phase"] == "ended", timeout=30)
        assert ended["callId"] == offer["offerId"]
        record = tenant.wait_record(number)[0]
        assert str(record["agent_id"]) == agent.id and str(record["call_id"]) == offer["offerId"]
        # the hold reached the agent's leg: counted on the caller's interaction (app/voice/agent_holds.py)
        summary = poll(lambda: tenant.admin.get(f"/api/call-records/{record['public_id']}")["summary"], 10)
        assert summary["hold_count"] == 1 and summary["hold_ms"] > 0, summary
        assert poll(lambda: tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available", 10)
    finally:
        client.close()
        phone_result = phone.wait(60)
    assert "BYE" in phone_result.messages, phone_result.errors
    assert "a=sendonly" in phone_result.messages, "no hold re-INVITE reached the agent's phone"


def test_given_an_unhold_100ms_after_the_hold_then_the_caller_is_not_left_on_hold_music_and_the_call_still_hangs_up(
        product, tenant, channel_queue, sipp, real_switch):
    """The race seen on FreeSWITCH 1.10.12: an unhold reaching the switch while the hold's
    re-INVITE and hold-music broadcast were still starting left the caller looping the music
    and the agent's leg could not be hung up. The controller now runs one action per leg at a
    time and waits for the leg's CHANNEL_HOLD / CHANNEL_UNHOLD before the opposite one."""
    queue, (agent, _other) = channel_queue
    phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-hold-ooc.xml", seconds=40)
    client = _channel(product, tenant, agent)
    try:
        sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        caller = sipp.start_calls(number, scenario="uac-wait-bye.xml")  # waits for the switch's BYE
        offer = client.expect("offer", timeout=20)
        client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
        assert client.command("hold")["ok"] is True
        time.sleep(0.1)  # scenario: the unhold 100 ms after the hold
        assert client.command("unhold")["ok"] is True
        # kept: both reach the switch, in order. The leg is ACTIVE before and after, so nothing
        # the switch shows tells "both applied" from "neither yet"
        time.sleep(2.0)
        assert client.command("dtmf", digits="1")["ok"] is True
        assert client.command("hangup")["ok"] is True
        result = caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]  # the caller got the BYE
        ended = client.expect("call", lambda m: m["phase"] == "ended", timeout=30)
        assert ended["callId"] == offer["offerId"]
        record = tenant.wait_record(number)[0]
        summary = poll(lambda: tenant.admin.get(f"/api/call-records/{record['public_id']}")["summary"], 10)
        # one hold, ended by the unhold (or none when both were coalesced): never a hold left open
        assert summary["hold_count"] in (0, 1) and summary["hold_ms"] >= 0, summary
        if summary["hold_count"] == 1:
            assert 0 < summary["hold_ms"] < 2000, summary
        assert poll(lambda: tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available", 10)
    finally:
        client.close()
        phone_result = phone.wait(60)
    assert "BYE" in phone_result.messages, phone_result.errors
