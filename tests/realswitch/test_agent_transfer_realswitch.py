"""An agent's blind transfer on the real switch: a sipp caller in a queue answered by a sipp
agent who, on the agent channel (the real ``sbc api``), transfers it to another agent or to
another queue; the real controller does it (``hangup_after_bridge`` off, the target's verb,
``uuid_kill`` of the agent's leg).

What only the real switch can say: that the caller's ``bridge`` returns without hanging the
caller up once the agent's leg is killed, that the next verb then runs on the caller's channel
(the second agent's phone rings and is bridged), and that the first agent's leg is gone."""
from __future__ import annotations

import time
import uuid

from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch import test_agent_channel_realswitch as channel_tests
from tests.realswitch.agent_call import agent_leg, caller_with_agent
from tests.realswitch.provision import poll

channel_queue = channel_tests.channel_queue  # the same fixture: a queue with two SIP agents
_channel, _callstate = channel_tests._channel, channel_tests._callstate


def _agent_events(tenant, call_id: str) -> list[tuple[str, str]]:
    return [(e["key"], e["payload"]["agentId"]) for e in tenant.events("agent.")
            if e["payload"].get("callId") == call_id and e["key"] in ("agent.offer", "agent.accept")]


def test_given_a_caller_with_an_agent_when_the_agent_transfers_blind_to_another_agent_then_that_agent_gets_the_caller(
        product, tenant, channel_queue, sipp, real_switch):
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, caller_seconds=9,
                           phone_seconds=50) as call:
        first, second, client = call.first, call.second, call.client
        sip_agents.make_available(tenant, second)
        time.sleep(1.5)  # scenario: the first agent talks 1.5 s before transferring

        ack = client.command("transfer", target={"type": "agent", "agentId": second.id})

        assert ack["ok"] is True, ack
        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10, what="the first agent's leg gone")
        moved = client.expect("call", lambda m: m["phase"] == "transferred", timeout=20)
        assert moved["to"] == {"type": "agent", "agentId": second.id}
        result = call.caller.wait()  # the caller hangs up 9 s after its answer, talking to the second agent
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(call.number)[0]
        call_id = call.call_id
        assert str(record["call_id"]) == call_id and str(record["agent_id"]) == second.id
        assert "transfer:agent" in record["journey"]
        assert _agent_events(tenant, call_id) == [("agent.offer", first.id), ("agent.accept", first.id),
                                                  ("agent.offer", second.id), ("agent.accept", second.id)]
        [transferred] = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call_id]
        assert (transferred["kind"], transferred["from"], transferred["by"]) == (
            "blind", {"agentId": first.id}, {"agentId": first.id, "userId": None, "apiKeyId": None})
        details = poll(lambda: (lambda d: d if len(d["segments"]) == 2 and d["summary"] else None)(
            tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)
        segments, summary = details["segments"], details["summary"]
        assert [(s["agent_id"], s["transferred"]) for s in segments] == [(first.id, True), (second.id, False)]
        assert 1000 <= segments[0]["talk_ms"] <= 3500, segments[0]  # 1.5 s talk, plus the answer's setup
        assert 4000 <= segments[1]["talk_ms"] <= 8000, segments[1]  # the rest of the caller's 9 s
        assert summary["transfer_count"] == 1
        assert summary["talk_ms"] == segments[0]["talk_ms"] + segments[1]["talk_ms"]


def test_given_a_caller_with_an_agent_when_transferred_to_another_queue_then_it_waits_there_and_that_queues_agent_gets_it(
        product, tenant, sipp, real_switch):
    queues = [tenant.admin.post("/api/queues", {"name": f"tx-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 15,
                                                "wrap_up_seconds": 1, "announce_position": False})
              for _ in range(2)]
    first = sip_agents.new_agent(tenant, [queues[0]["id"]], prefix="tx")
    second = sip_agents.new_agent(tenant, [queues[1]["id"]], prefix="tx")
    for agent in (first, second):
        assert poll(lambda a=agent: sip_agents.in_directory(real_switch, a), 15), "directory not applied"
    phones = [sip_agents.register(sipp, real_switch, first, "agent-answer-ooc.xml", seconds=50),
              sip_agents.register(sipp, real_switch, second, "agent-answer-ooc.xml", seconds=50)]
    client = _channel(product, tenant, first)
    try:
        sip_agents.make_available(tenant, first)
        sip_agents.make_available(tenant, second)
        number = tenant.number_for([{"verb": "queue", "name": queues[0]["name"], "priority": 5}])
        caller = sipp.start_calls(number, scenario="uac-bye-after.xml", extra=("-d", "8000"))
        offer = client.expect("offer", timeout=20)
        client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
        leg = agent_leg(tenant, first)

        ack = client.command("transfer", target={"type": "queue", "name": queues[1]["name"]})

        assert ack["ok"] is True, ack
        eventually(lambda: _callstate(real_switch, leg) is None, timeout=10, what="the first agent's leg gone")
        result = caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        call_id = offer["offerId"]
        assert str(record["agent_id"]) == second.id
        enqueued = [e["payload"] for e in tenant.events("queue.caller.enqueued") if e["payload"]["callId"] == call_id]
        assert [e["queue"] for e in enqueued] == [queues[0]["name"], queues[1]["name"]]
        details = poll(lambda: (lambda d: d if len(d["segments"]) == 2 and d["summary"] else None)(
            tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, True), (second.id, False)]
        assert details["summary"]["transfer_count"] == 1
    finally:
        client.close()
        for phone in phones:
            phone.wait(60)
