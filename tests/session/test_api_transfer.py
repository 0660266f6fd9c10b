"""A blind transfer asked from the REST API (``POST /api/calls/:callId/actions``, action
``transfer``) end to end in one process: the real API, the real controller side of live control
and a real CallSession driving a simulated queue call; the same transfer the agent channel asks
(app/voice/live_actions.transfer), with ``by`` the API user and key."""
from __future__ import annotations

import uuid

import pytest

from app.api.calls import live
from app.contact.distribution import ContactCentre
from app.settings import get_settings
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record
from tests.session.desk import agent_desk, outbox_payloads, rows
from tests.session.test_live_control import PAUSE, number_for
from tests.simulator import Call
from tests.simulator.scenario import RingingPhone


def _with_ana(tenant, simulate_call, controller, owner_engine, owner_conn, redis_client, services,
              queues=("support",), consulted: RingingPhone | None = None):
    """A caller of ``support`` talking to ana (``consulted``: the phone her consultation
    rings); (call, agents, ana's bridged leg id)."""
    number = number_for(tenant, [{"verb": "queue", "name": "support", "priority": 2}])
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, tenant.account_id, queues=queues)
    services.contact = ContactCentre(presence)
    ana_phone = RingingPhone()
    scenario = Call(callee=number).bridge_rings(ana_phone)
    if consulted is not None:
        scenario = scenario.consult_rings(consulted)
    call = simulate_call(scenario, controller)
    assert ana_phone.ringing.wait(10), "ana was not offered the call"
    ana_phone.answer()
    leg = eventually(lambda: services.live_sessions.get(call.uuid) and services.live_sessions[call.uuid].other_leg,
                     timeout=10, what="the caller bridged to ana")
    return call, agents, leg


def test_given_a_caller_talking_to_an_agent_when_an_api_key_transfers_it_to_another_queue_then_it_waits_there_and_the_events_name_the_key(
        api, admin, tenant, controller, live_control, simulate_call, owner_engine, owner_conn, redis_client,
        services):
    call, agents, _leg = _with_ana(tenant, simulate_call, controller, owner_engine, owner_conn, redis_client,
                                   services, queues=("support", "billing"))
    key = admin.post("/api/api-keys", json={"scopes": ["call_control"]}).get_json()
    by_key = api.anonymous(tenant.host)

    response = by_key.post(f"/api/calls/{call.uuid}/actions", headers={"X-API-Key": key["key"]},
                           json={"action": "transfer", "target": {"type": "queue", "name": "billing"}})

    assert response.status_code == 200, response.get_json()
    assert response.get_json()["action"] == "transfer"
    assert call.channel.vars.get("hangup_after_bridge") == "false"  # the caller outlives ana's leg
    waiting = services.contact.presence.waiting_key(str(tenant.account_id), "billing")
    eventually(lambda: redis_client.zscore(waiting, call.uuid) is not None, timeout=10,
               what="the caller in billing's line")
    admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})
    assert call.wait(15)
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert "transfer:queue" in record["journey"]
    by = {"userId": str(tenant.admin.id), "apiKeyId": key["id"], "agentId": None}
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert (event["kind"], event["from"], event["to"], event["by"]) == (
        "blind", {"agentId": agents["ana"]}, {"type": "queue", "name": "billing"}, by)
    [applied] = [a for a in outbox_payloads(owner_conn, call.uuid, "call.control.applied") if a["action"] == "transfer"]
    assert applied["by"] == by and applied["details"]["to"] == {"type": "queue", "name": "billing"}
    [segment] = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c", c=call.uuid)
    assert (str(segment["agent_id"]), segment["transferred"]) == (agents["ana"], True)
    [summary] = rows(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["transfer_count"] == 1


def test_given_a_caller_talking_to_an_agent_when_the_api_transfers_it_to_that_agent_or_an_unknown_one_then_409_and_the_call_stays(
        admin, tenant, controller, live_control, simulate_call, owner_engine, owner_conn, redis_client, services):
    call, agents, ana_leg = _with_ana(tenant, simulate_call, controller, owner_engine, owner_conn, redis_client,
                                      services)
    path = f"/api/calls/{call.uuid}/actions"

    to_self = admin.post(path, json={"action": "transfer", "target": {"type": "agent", "agentId": agents["ana"]}})
    to_nobody = admin.post(path, json={"action": "transfer", "target": {"type": "agent", "agentId": str(uuid.uuid4())}})

    assert to_self.status_code == 409 and to_self.get_json()["code"] == "transfer_to_self"
    assert to_nobody.status_code == 409 and to_nobody.get_json()["code"] == "transfer_target_not_found"
    assert to_nobody.get_json()["details"]["state"]["bridged"] is True
    assert call.channel.vars.get("hangup_after_bridge") != "false"  # nothing touched
    assert services.live_sessions[call.uuid].other_leg == ana_leg
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []
    admin.post(path, json={"action": "hangup"})
    assert call.wait(15)


@pytest.mark.parametrize(("target", "code"), [
    ({"type": "number", "number": "+15557770000", "callerId": "+15550009999"}, "caller_id_not_owned"),
    ({"type": "number", "number": "+15557770000"}, "transfer_target_not_found"),  # no route
    ({"type": "sip", "uri": "sip:pbx@203.0.113.9"}, "transfer_target_not_found"),  # host not listed
])
def test_given_a_number_or_sip_target_the_account_may_not_reach_when_the_api_transfers_to_it_then_409_and_the_caller_keeps_its_agent(
        admin, tenant, controller, live_control, simulate_call, owner_engine, owner_conn, redis_client, services,
        target, code):
    call, _agents, ana_leg = _with_ana(tenant, simulate_call, controller, owner_engine, owner_conn, redis_client,
                                       services)
    path = f"/api/calls/{call.uuid}/actions"

    response = admin.post(path, json={"action": "transfer", "target": target})

    assert response.status_code == 409 and response.get_json()["code"] == code
    assert response.get_json()["details"]["state"]["bridged"] is True
    assert services.live_sessions[call.uuid].other_leg == ana_leg  # still bridged to ana
    assert call.channel.vars.get("hangup_after_bridge") != "false"  # nothing touched
    assert not [c for c in call.controls if c.startswith("uuid_kill")]
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []
    admin.post(path, json={"action": "hangup"})
    assert call.wait(15)


def test_given_a_call_bridged_by_a_dial_not_an_agent_when_the_api_transfers_it_then_409_call_not_with_agent(
        admin, tenant, controller, live_control, simulate_call, redis_client, owner_conn):
    number = number_for(tenant, [{"verb": "dial", "target": [{"type": "sip", "name": "sip:bob@example.com"}]}])
    call = simulate_call(Call(callee=number).bridge_answers(talk=30.0, b_leg_uuid=str(uuid.uuid4())), controller)
    path = f"/api/calls/{call.uuid}/actions"
    eventually(lambda: admin.post(path, json={"action": "unhold"}).status_code == 200, timeout=10,
               what="the call bridged")

    response = admin.post(path, json={"action": "transfer", "target": {"type": "number", "number": "+4915112345678"}})

    assert response.status_code == 409 and response.get_json()["code"] == "call_not_with_agent"
    assert call.channel.vars.get("hangup_after_bridge") != "false"
    admin.post(path, json={"action": "hangup"})
    assert call.wait(15)


def test_given_a_call_in_its_verbs_with_nobody_bridged_when_the_api_transfers_it_then_409_call_not_bridged(
        admin, tenant, controller, live_control, simulate_call, redis_client):
    number = number_for(tenant, PAUSE)
    call = simulate_call(Call(callee=number), controller)
    eventually(lambda: call.executed("sleep"), timeout=10, what="the pause running")
    path = f"/api/calls/{call.uuid}/actions"

    response = admin.post(path, json={"action": "transfer", "target": {"type": "queue", "name": "support"}})

    assert response.status_code == 409 and response.get_json()["code"] == "call_not_bridged"
    admin.post(path, json={"action": "hangup"})
    assert call.wait(15)


def test_given_another_tenants_call_with_an_agent_when_transferred_from_the_api_then_404_and_untouched(
        api, seed, controller, live_control, simulate_call, owner_engine, owner_conn, redis_client, services):
    other = seed.tenant()
    call, _agents, leg = _with_ana(other, simulate_call, controller, owner_engine, owner_conn, redis_client,
                                    services, queues=("support", "billing"))
    intruder = api.login(seed.tenant())

    response = intruder.post(f"/api/calls/{call.uuid}/actions",
                             json={"action": "transfer", "target": {"type": "queue", "name": "billing"}})

    assert response.status_code == 404 and response.get_json()["code"] == "call_not_found"
    assert call.channel.vars.get("hangup_after_bridge") != "false"
    assert services.live_sessions[call.uuid].other_leg == leg
    api.login(other).post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})
    assert call.wait(15)


def test_given_an_agent_consulting_when_the_api_makes_it_a_three_way_call_then_all_three_meet_and_the_event_names_the_user(
        api, admin, tenant, controller, live_control, simulate_call, owner_engine, owner_conn, redis_client,
        services):
    ben_phone = RingingPhone()
    call, agents, ana_leg = _with_ana(tenant, simulate_call, controller, owner_engine, owner_conn, redis_client,
                                      services, consulted=ben_phone)
    refused = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "conference"})
    assert refused.status_code == 409 and refused.get_json()["code"] == "not_consulting"
    live.send(redis_client, get_settings().redis_key_prefix, str(tenant.account_id), call.uuid, "consult",
              {"target": {"type": "agent", "agentId": agents["ben"]}, "agentId": agents["ana"]},
              by={"agentId": agents["ana"]})
    assert ben_phone.ringing.wait(10), "ben was not rung"
    early = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "conference"})
    assert early.status_code == 409 and early.get_json()["code"] == "consult_not_answered"
    ben_phone.answer()
    eventually(lambda: ben_phone.b_leg_uuid in call.legs and call.legs[ben_phone.b_leg_uuid].answered,
               timeout=10, what="ben answered")

    response = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "conference"})

    assert response.status_code == 200, response.get_json()
    eventually(lambda: call.rejoined == ["3way"], timeout=10, what="the caller in the three-way room")
    assert list(call.three_way.values()) == [{ana_leg, ben_phone.b_leg_uuid}]
    [event] = eventually(lambda: outbox_payloads(owner_conn, call.uuid, "call.conferenced"), timeout=10,
                         what="call.conferenced")
    assert event["by"] == {"userId": str(tenant.admin.id), "apiKeyId": None, "agentId": None}
    assert event["agentId"] == agents["ana"] and event["to"] == {"type": "agent", "agentId": agents["ben"]}
    ben_phone.hangup()
    admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})
    assert call.wait(15), "the call did not end"
