"""An agent's attended transfer on the real switch: a sipp caller in a queue answered by a sipp
agent who, on the agent channel (the real ``sbc api``), consults a second sipp agent, then
completes or cancels (app/voice/consult_actions.py, app/verbs/consult_hold.py).

What only the real switch can say: that ``uuid_transfer … inline`` of the agent's leg returns
the caller's ``bridge`` without hanging the caller up, that the originate's quoted hooks run,
and that the caller's ``intercept`` of the consulted leg hangs up the first agent (complete) or
takes the parked agent back (cancel)."""
from __future__ import annotations

import time

from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch import test_agent_channel_realswitch as channel_tests
from tests.realswitch.provision import poll
from tests.realswitch.test_agent_transfer_realswitch import _agent_leg
from tests.realswitch.test_supervisor import _heard

channel_queue = channel_tests.channel_queue  # the same fixture: a queue with two SIP agents
_channel, _callstate = channel_tests._channel, channel_tests._callstate


def _consulting(product, tenant, channel_queue, sipp, real_switch, caller_seconds: int):
    queue, (first, second) = channel_queue
    phones = [sip_agents.register(sipp, real_switch, first, "agent-answer-ooc.xml", seconds=60),
              sip_agents.register(sipp, real_switch, second, "agent-answer-ooc.xml", seconds=60)]
    client = _channel(product, tenant, first)
    sip_agents.make_available(tenant, first)  # longest idle: offered first
    number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
    caller = sipp.start_calls(number, scenario="uac-bye-after.xml", extra=("-d", str(caller_seconds * 1000)))
    offer = client.expect("offer", timeout=20)
    client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
    leg = _agent_leg(tenant, first)
    sip_agents.make_available(tenant, second)  # a consulted agent is claimed: it must be free
    time.sleep(1.5)  # scenario: the first agent talks 1.5 s before consulting
    ack = client.command("consult", target={"type": "agent", "agentId": second.id})
    assert ack["ok"] is True, ack
    return first, second, phones, client, number, caller, offer["offerId"], leg


def test_given_an_agent_consulting_another_agent_when_it_completes_then_the_second_agent_has_the_caller(
        product, tenant, channel_queue, sipp, real_switch):
    first, second, phones, client, number, caller, call_id, leg = _consulting(
        product, tenant, channel_queue, sipp, real_switch, caller_seconds=14)
    try:
        # refused consult_not_answered until the second agent's phone answered
        eventually(lambda: client.command("completeTransfer")["ok"], timeout=15, what="the transfer completed")

        eventually(lambda: _callstate(real_switch, leg) is None, timeout=10, what="the first agent's leg gone")
        moved = client.expect("call", lambda m: m["phase"] == "transferred", timeout=20)
        assert moved["to"] == {"type": "agent", "agentId": second.id}
        result = caller.wait()  # the caller hangs up 14 s after its answer, talking to the second agent
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["call_id"]) == call_id and str(record["agent_id"]) == second.id
        [transferred] = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call_id]
        assert (transferred["kind"], transferred["from"], transferred["to"]) == (
            "attended", {"agentId": first.id}, {"type": "agent", "agentId": second.id})
        details = poll(lambda: (lambda d: d if len(d["segments"]) == 2 and d["summary"] else None)(
            tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)
        segments, summary = details["segments"], details["summary"]
        assert [(s["agent_id"], s["transferred"]) for s in segments] == [(first.id, True), (second.id, False)]
        assert summary["transfer_count"] == 1
    finally:
        client.close()
        for phone in phones:
            phone.wait(70)


def test_given_an_agent_consulting_another_agent_when_it_cancels_then_it_has_the_caller_again(
        product, tenant, channel_queue, sipp, real_switch):
    first, second, phones, client, number, caller, call_id, leg = _consulting(
        product, tenant, channel_queue, sipp, real_switch, caller_seconds=10)
    try:
        time.sleep(2.0)  # scenario: the consultation lasts 2 s

        ack = client.command("cancelConsult")

        assert ack["ok"] is True, ack
        result = caller.wait()  # the caller hangs up 10 s after its answer, back with the first agent
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["call_id"]) == call_id and str(record["agent_id"]) == first.id
        assert [e for e in tenant.events("call.transferred") if e["payload"]["callId"] == call_id] == []
        eventually(lambda: _callstate(real_switch, leg) is None, timeout=10,
                   what="the first agent's leg ended with the caller")
        details = poll(lambda: (lambda d: d if d["segments"] and d["summary"] else None)(
            tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, False)]
    finally:
        client.close()
        for phone in phones:
            phone.wait(70)


def test_given_a_cancelled_consultation_when_the_agent_consults_again_and_completes_then_the_second_agent_has_the_caller(
        product, tenant, channel_queue, sipp, real_switch):
    first, second, phones, client, number, caller, call_id, leg = _consulting(
        product, tenant, channel_queue, sipp, real_switch, caller_seconds=18)
    try:
        time.sleep(2.0)  # scenario: the first consultation lasts 2 s
        assert client.command("cancelConsult")["ok"] is True
        time.sleep(2.0)  # scenario: the agent talks 2 s with its caller again (their room)

        ack = client.command("consult", target={"type": "agent", "agentId": second.id})

        assert ack["ok"] is True, ack  # not call_not_bridged: the agent's leg left the room
        assert _callstate(real_switch, leg) is not None, "the first agent's leg was hung up"
        eventually(lambda: client.command("completeTransfer")["ok"], timeout=15, what="the transfer completed")
        eventually(lambda: _callstate(real_switch, leg) is None, timeout=10, what="the first agent's leg gone")
        result = caller.wait()  # the caller hangs up 18 s after its answer, talking to the second agent
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["call_id"]) == call_id and str(record["agent_id"]) == second.id
        transferred = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call_id]
        assert [(t["kind"], t["to"]) for t in transferred] == [("attended", {"type": "agent", "agentId": second.id})]
        details = poll(lambda: (lambda d: d if len(d["segments"]) == 2 and d["summary"] else None)(
            tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, True), (second.id, False)]
        assert details["summary"]["transfer_count"] == 1
    finally:
        client.close()
        for phone in phones:
            phone.wait(70)


def test_given_an_answered_consultation_when_the_agent_swaps_then_it_hears_the_caller_while_the_target_holds_and_back(
        product, tenant, channel_queue, sipp, real_switch):
    """Only the caller talks (sipp agents send nothing): what the switch sends each party
    (``uuid_record`` of its write stream) says who is with whom. Consulting, the agent hears
    the silent target and the caller hears music; swapped, the agent hears the caller, the
    caller hears the silent agent and the target hears music; swapped back, as consulting."""
    queue, (first, second) = channel_queue
    phones = [sip_agents.register(sipp, real_switch, first, "agent-answer-ooc.xml", seconds=60),
              sip_agents.register(sipp, real_switch, second, "agent-answer-ooc.xml", seconds=60)]
    client = _channel(product, tenant, first)
    try:
        sip_agents.make_available(tenant, first)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        caller = sipp.start_calls(number, codec="PCMA", scenario="uac-talk-long.xml")  # talks 21 s
        call_id = client.expect("offer", timeout=20)["offerId"]
        client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
        leg = _agent_leg(tenant, first)
        sip_agents.make_available(tenant, second)
        assert client.command("consult", target={"type": "agent", "agentId": second.id})["ok"] is True
        target = eventually(lambda: sip_agents.presence().engaged_by(str(tenant.account_id), second.id),
                            timeout=5, what="the consulted agent claimed")
        eventually(lambda: real_switch.api(f"uuid_getvar {target} sbc_consult_answered", check=False).strip() == "true",
                   timeout=15, what="the consulted agent answered")
        parties = {"caller": call_id, "agent": leg, "target": target}
        heard = {"consulting": _heard(real_switch, parties, "consulting")}

        assert client.command("swap")["ok"] is True
        time.sleep(0.5)  # scenario: let the room settle (the caller's music is broken, it joins)
        heard["swapped"] = _heard(real_switch, parties, "swapped")
        assert client.command("swap")["ok"] is True
        time.sleep(0.5)  # scenario: the caller's room ends, its music starts again
        heard["back"] = _heard(real_switch, parties, "back")
        print("loudness (RMS) of what each party is sent:", heard)

        quiet, loud = 100, 200  # measured: silence 0-2, speech and music in the hundreds or more
        assert heard["consulting"]["agent"] < quiet and heard["consulting"]["caller"] > loud, heard
        assert heard["swapped"]["agent"] > loud, heard       # the agent hears the caller
        assert heard["swapped"]["caller"] < quiet, heard     # the caller hears the silent agent, not music
        assert heard["swapped"]["target"] > loud, heard      # the target holds with music
        assert heard["back"]["agent"] < quiet and heard["back"]["target"] < quiet, heard
        assert heard["back"]["caller"] > loud, heard         # music again
        eventually(lambda: client.command("completeTransfer")["ok"], timeout=10, what="the transfer completed")
        eventually(lambda: _callstate(real_switch, leg) is None, timeout=10, what="the first agent's leg gone")
        result = caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["call_id"]) == call_id and str(record["agent_id"]) == second.id
    finally:
        client.close()
        for phone in phones:
            phone.wait(70)
