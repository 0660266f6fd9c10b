"""Queue callbacks on the real switch: a pending callback is dialled by the dispatcher of the
real ``sbc workers`` when an agent of its queue becomes available (agent.state.changed), the
controller's originate rings the customer (a sipp carrier) through least-cost routing, and the
answered customer's leg dials the agent's registered phone (sipp on the ``internal`` profile,
``user/<sip user>`` in the account's directory domain) and is bridged to it. Then: the
callback is ``completed``, the call record carries the agent and the queue, and after the call
the agent does its after-call work and is ``available`` again. A busy customer (486) leaves the
callback ``pending`` for a retry and frees the agent at once."""
from __future__ import annotations

import time
import uuid

from tests.realswitch import agents as sip_agents
from tests.realswitch import outbound
from tests.realswitch.provision import poll


def test_a_pending_callback_is_dialled_when_its_agent_becomes_available_and_bridged_to_the_registered_agent(
        product, routing_tenant, carriers, sipp, real_switch, owner_engine):
    tenant = routing_tenant
    prefix = outbound.prefix()
    customer = carriers.answering("PCMU")
    carrier_id, gateway_id = outbound.carrier(tenant, "customers", customer.port)
    outbound.route(product, tenant, prefix, [carrier_id])
    outbound.wait_gateways(real_switch, gateway_id)
    queue = tenant.admin.post("/api/queues", {"name": f"cb-{uuid.uuid4().hex[:6]}", "wrap_up_seconds": 1,
                                              "announce_position": False})
    agent = sip_agents.new_agent(tenant, [queue["id"]], prefix="cb")
    assert poll(lambda: sip_agents.in_directory(real_switch, agent), 15), "directory not applied"
    phone = sip_agents.register(sipp, real_switch, agent, seconds=40)
    call_id = None
    try:
        callback = tenant.admin.post(f"/api/queues/{queue['id']}/callbacks",
                                     {"phone_number": f"+{prefix}5550110", "priority": 5})
        assert callback["status"] == "pending"
        presence = sip_agents.presence()  # register() returned once the registration was tracked
        assert presence.is_registered(agent.domain, agent.sip_username)
        tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})

        path = f"/api/queues/{queue['id']}/callbacks/{callback['id']}"
        assert poll(lambda: tenant.admin.get(path)["status"] != "pending", 20), \
            f"never dispatched\n{product.workers.log_tail()}"
        (originate,) = outbound.outbox(owner_engine, "call.originate", "callbackId", callback["id"])
        call_id = originate["payload"]["callId"]
        assert originate["payload"]["agentId"] == agent.id and originate["payload"]["attempt"] == 1
        assert poll(lambda: outbound.bridged(real_switch, call_id), 30), \
            f"customer not bridged to the agent\n{product.controller.log_tail()}\n{real_switch.log_tail(60)}"
        # the originator writes the outcome once its originate returns; the answered customer's
        # leg can reach the agent before that write lands
        assert poll(lambda: tenant.admin.get(path)["status"] == "completed", 10), tenant.admin.get(path)
        assert tenant.admin.get(path)["attempts"] == 1
        assert tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available"
        time.sleep(1.0)  # scenario: talk
        real_switch.api(f"uuid_kill {call_id}")  # the customer's side ends the call

        record = poll(lambda: outbound.record(owner_engine, call_id), 20)
        assert record, f"no call record for {call_id}"
        assert (str(record["agent_id"]), str(record["queue_id"])) == (agent.id, queue["id"])
        assert record["direction"] == "outbound" and record["status"] == "completed", record
        # after-call work (the queue's 1 s), then available again
        states = [e["payload"]["state"] for e in tenant.events("agent.state.changed")
                  if e["payload"]["agentId"] == agent.id]
        assert poll(lambda: tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available"
                    and "wrap_up" in [e["payload"]["state"] for e in tenant.events("agent.state.changed")
                                      if e["payload"]["agentId"] == agent.id], 15), states
    finally:
        if call_id is not None:  # a failed assertion above leaves the call up: end it here
            real_switch.api(f"uuid_kill {call_id}", check=False)
        result = phone.wait(60)
    assert "INVITE" in result.messages and "ACK" in result.messages, result.errors


def test_a_callback_whose_customer_is_busy_goes_back_to_pending_and_frees_the_agent_at_once(
        product, routing_tenant, carriers, sipp, real_switch, owner_engine):
    """The customer's 486 (USER_BUSY) is a not-reached attempt: the callback is ``pending``
    with one attempt (dialled again after the retry delay), the attempt has its call record,
    and the agent is idle again without after-call work."""


    tenant = routing_tenant
    prefix = outbound.prefix()
    busy = carriers._start("carrier-busy-486.xml", None)
    carrier_id, gateway_id = outbound.carrier(tenant, "busy-customers", busy.port)
    outbound.route(product, tenant, prefix, [carrier_id])
    outbound.wait_gateways(real_switch, gateway_id)
    queue = tenant.admin.post("/api/queues", {"name": f"cb-{uuid.uuid4().hex[:6]}", "wrap_up_seconds": 30,
                                              "announce_position": False})
    agent = sip_agents.new_agent(tenant, [queue["id"]], prefix="cb")
    assert poll(lambda: sip_agents.in_directory(real_switch, agent), 15), "directory not applied"
    presence = sip_agents.presence()
    phone = sip_agents.register(sipp, real_switch, agent, seconds=15)
    try:
        assert poll(lambda: presence.is_registered(agent.domain, agent.sip_username), 10)
        tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
        callback = tenant.admin.post(f"/api/queues/{queue['id']}/callbacks", {"phone_number": f"{prefix}5550111"})
        path = f"/api/queues/{queue['id']}/callbacks/{callback['id']}"
        # the sweep finds it (the agent was available before the callback existed)
        assert poll(lambda: tenant.admin.get(path)["attempts"] == 1
                    and tenant.admin.get(path)["status"] == "pending", 30), \
            f"{tenant.admin.get(path)}\n{product.workers.log_tail()}\n{product.controller.log_tail()}"
        (originate,) = outbound.outbox(owner_engine, "call.originate", "callbackId", callback["id"])
        record = poll(lambda: outbound.record(owner_engine, originate["payload"]["callId"]), 10)
        assert record and record["status"] == "busy" and str(record["agent_id"]) == agent.id, record
        assert poll(lambda: agent.id in presence.idle_agents(str(tenant.account_id)), 10)
        assert presence.engaged_by(str(tenant.account_id), agent.id) is None
        assert tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available"
    finally:
        phone.wait(30)
