"""An agent's blind transfer end to end in one process: a real CallSession driving a simulated
queue call, the real controller side of live control (LiveControl on its Redis channel), the
request the agent channel sends (app/api/calls/live.send), PostgreSQL for the records, the
segments and the outbox."""
from __future__ import annotations

import json
import time
import uuid

import pytest

from app.api.calls import live
from app.contact.distribution import ContactCentre
from app.contact.presence import PRIORITY_WEIGHT
from app.errors import Conflict
from app.settings import get_settings
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record
from tests.session.desk import agent_desk, outbox_payloads, rows
from tests.simulator import Call
from tests.simulator.scenario import RingingPhone


def _transfer(redis_client, account, call_id: str, agent_id: str, target: dict) -> dict:
    return live.send(redis_client, get_settings().redis_key_prefix, str(account.id), call_id, "transfer",
                     {"target": target}, by={"agentId": agent_id})


def test_given_a_caller_talking_to_an_agent_when_the_agent_transfers_blind_to_another_agent_then_the_second_agent_gets_the_call_and_records_show_both(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support", "priority": 3}])
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id)
    services.contact = ContactCentre(presence)
    ana_phone, ben_phone = RingingPhone(), RingingPhone()
    call = simulate_call(Call(callee=number).bridge_rings(ana_phone).bridge_rings(ben_phone), controller)
    assert ana_phone.ringing.wait(10), "ana was not offered the call"
    ana_phone.answer()
    eventually(lambda: services.live_sessions.get(call.uuid) and services.live_sessions[call.uuid].other_leg,
               timeout=10, what="the caller bridged to ana")
    time.sleep(1.0)  # scenario: ana talks 1 s before she transfers

    state = _transfer(redis_client, account, call.uuid, agents["ana"], {"type": "agent", "agentId": agents["ben"]})

    assert state["bridged"] is True  # answered before the agent's leg is hung up
    assert ben_phone.ringing.wait(10), "ben was not offered the transferred call"
    queue_bridge = call.executed("bridge")[-1][1]
    assert f"sbc_agent_id={agents['ben']}" in queue_bridge
    ben_phone.answer()
    time.sleep(1.5)  # scenario: ben talks 1.5 s, then hangs up
    ben_phone.hangup()
    assert call.wait(15), "the call did not end"

    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ben"])
    assert "transfer:agent" in record["journey"]
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert event["kind"] == "blind"
    assert event["from"] == {"agentId": agents["ana"]}
    assert event["by"] == {"agentId": agents["ana"], "userId": None, "apiKeyId": None}
    assert event["to"] == {"type": "agent", "agentId": agents["ben"]}
    segments = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c ORDER BY started_at",
                     c=call.uuid)
    assert [(str(s["agent_id"]), s["transferred"]) for s in segments] == [(agents["ana"], True),
                                                                         (agents["ben"], False)]
    assert 900 <= segments[0]["talk_ms"] <= 2000
    assert 1300 <= segments[1]["talk_ms"] <= 2500
    assert segments[0]["ended_at"] <= segments[1]["started_at"]
    [summary] = rows(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["transfer_count"] == 1
    assert summary["talk_ms"] == segments[0]["talk_ms"] + segments[1]["talk_ms"]
    assert [p["agentId"] for p in outbox_payloads(owner_conn, call.uuid, "agent.accept")] == [agents["ana"], agents["ben"]]


def test_given_a_caller_talking_to_an_agent_when_transferred_to_another_queue_then_it_waits_there_with_its_priority(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control, hook_server):
    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support", "priority": 4}],
                                         call_status_hook_url=hook_server.url("/status"))
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id, queues=("support", "billing"))
    services.contact = ContactCentre(presence)
    ana_phone = RingingPhone()
    call = simulate_call(Call(callee=number).bridge_rings(ana_phone), controller)
    assert ana_phone.ringing.wait(10)
    ana_phone.answer()
    eventually(lambda: services.live_sessions.get(call.uuid) and services.live_sessions[call.uuid].other_leg,
               timeout=10, what="the caller bridged to ana")

    _transfer(redis_client, account, call.uuid, agents["ana"], {"type": "queue", "name": "billing"})

    waiting = presence.waiting_key(str(account.id), "billing")
    eventually(lambda: redis_client.zscore(waiting, call.uuid) is not None, timeout=10,
               what="the caller in billing's line")
    # priority 4 kept: the score Presence.join gives a priority-4 caller joining about now
    assert redis_client.zscore(waiting, call.uuid) == pytest.approx(
        -4 * PRIORITY_WEIGHT + time.time() * 1000, abs=10_000)
    live.send(redis_client, get_settings().redis_key_prefix, str(account.id), call.uuid, "hangup", {}, by={})
    assert call.wait(15)
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert event["to"] == {"type": "queue", "name": "billing"}
    [segment] = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c", c=call.uuid)
    assert (str(segment["agent_id"]), segment["transferred"]) == (agents["ana"], True)
    [summary] = rows(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["transfer_count"] == 1 and summary["talk_ms"] == segment["talk_ms"]
    # the status hook: answered, the transfer, the end, in that order
    eventually(lambda: len(hook_server.requests) >= 3, what="three status hook requests")
    bodies = [json.loads(r.body) for r in hook_server.requests]
    assert [b["callStatus"] for b in bodies] == ["in-progress", "in-progress", "completed"]
    assert "transfer" not in bodies[0] and bodies[1]["transfer"]["to"] == {"type": "queue", "name": "billing"}
    assert bodies[1]["transfer"]["from"] == {"agentId": agents["ana"]}


def test_given_a_call_not_answered_by_an_agent_when_a_transfer_is_asked_then_409_call_not_bridged(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 30}])
    call = simulate_call(Call(callee=number).hangup_after(5.0), controller)
    eventually(lambda: call.uuid in services.live_sessions, timeout=10, what="the live call")

    with pytest.raises(Conflict) as refused:
        _transfer(redis_client, account, call.uuid, str(uuid.uuid4()), {"type": "queue", "name": "support"})

    assert refused.value.code == "call_not_bridged"
    assert call.wait(15)


@pytest.mark.parametrize(("target", "code"), [
    ({"type": "number", "number": "+15557770000", "callerId": "+15550009999"}, "caller_id_not_owned"),
    ({"type": "number", "number": "+15557770000"}, "transfer_target_not_found"),  # no route
    ({"type": "sip", "uri": "sip:pbx@203.0.113.9"}, "transfer_target_not_found"),  # host not listed
])
def test_given_a_number_or_sip_target_the_account_may_not_reach_when_the_agent_transfers_blind_then_it_is_refused_and_the_caller_keeps_its_agent(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control, target, code):
    """The dial verb's rules checked before the agent's leg is hung up: otherwise the dial would
    fail with the agent gone and the caller would be lost."""
    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support"}])
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id)
    services.contact = ContactCentre(presence)
    ana_phone = RingingPhone()
    call = simulate_call(Call(callee=number).bridge_rings(ana_phone), controller)
    assert ana_phone.ringing.wait(10), "ana was not offered the call"
    ana_phone.answer()
    ana_leg = eventually(lambda: services.live_sessions.get(call.uuid) and services.live_sessions[call.uuid].other_leg,
                         timeout=10, what="the caller bridged to ana")

    with pytest.raises(Conflict) as refused:
        _transfer(redis_client, account, call.uuid, agents["ana"], target)

    assert refused.value.code == code
    assert services.live_sessions[call.uuid].other_leg == ana_leg  # still bridged to ana
    assert call.channel.vars.get("hangup_after_bridge") != "false"  # nothing touched
    assert not [c for c in call.controls if c.startswith("uuid_kill")]
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"
