"""``dial`` with a user target then a queue target on the real switch (SPEC "dial": targets are
tried in order): the agent phone dialled directly lets it ring out, so the caller lands in the
queue and is answered there by another registered agent."""
from __future__ import annotations

import uuid

from tests.realswitch import agents as sip_agents
from tests.realswitch.provision import poll


def test_a_caller_whose_dialled_user_does_not_answer_lands_in_the_queue_and_another_agent_answers(
        tenant, sipp, real_switch):
    queue = tenant.admin.post("/api/queues", {"name": f"dq-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 4,
                                              "wrap_up_seconds": 1, "announce_position": False})
    ringer, answerer = (sip_agents.new_agent(tenant, [queue["id"]]) for _ in range(2))
    for agent in (ringer, answerer):
        assert poll(lambda a=agent: sip_agents.in_directory(real_switch, a), 15), "directory not applied"
    phones = [sip_agents.register(sipp, real_switch, ringer, "agent-ring-ooc.xml", seconds=25),
              sip_agents.register(sipp, real_switch, answerer, "agent-answer-ooc.xml", seconds=25)]
    try:
        sip_agents.make_available(tenant, answerer)  # the ringer is not available: only dialled directly
        number = tenant.number_for([{"verb": "dial", "timeout": 3, "target": [
            {"type": "user", "name": ringer.sip_username}, {"type": "queue", "name": queue["name"]}]}])
        result = sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "9000"))
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["queue_id"]) == queue["id"] and str(record["agent_id"]) == answerer.id
        events = [e for e in tenant.events("agent.") + tenant.events("queue.")
                  if e["payload"].get("callId") == str(record["call_id"])]
        keys = [e["key"] for e in events]
        assert "queue.caller.enqueued" in keys and "agent.accept" in keys, keys
        assert {e["payload"]["agentId"] for e in events if e["key"] == "agent.offer"} == {answerer.id}
    finally:
        results = [p.wait(40) for p in phones]
    assert "INVITE" in results[0].messages and "CANCEL" in results[0].messages, results[0].errors  # rang out
    assert "ACK" in results[1].messages, results[1].errors
