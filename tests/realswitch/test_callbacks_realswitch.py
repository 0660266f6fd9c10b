"""Queue callbacks on the real switch: a pending callback is dialled by the dispatcher of the
real ``sbc workers`` when an agent of its queue becomes available (agent.state.changed), the
controller's originate rings the customer (a sipp carrier) through least-cost routing, and the
answered customer's leg dials the agent's registered phone (sipp on the ``internal`` profile,
``user/<sip user>`` in the account's directory domain) and is bridged to it. Then: the
callback is ``completed``, the call record carries the agent and the queue, and after the call
the agent does its after-call work and is ``available`` again. A busy customer (486) leaves the
callback ``pending`` for a retry and frees the agent at once."""
from __future__ import annotations

import json
import time
import uuid

from tests.realswitch import outbound
from tests.realswitch.provision import poll
from tests.realswitch.sipp import SippProcess, free_port

PASSWORD = "agent-pass-123456"


def _agent(tenant, queue_id: str) -> dict:
    name = f"cb-{uuid.uuid4().hex[:6]}"
    user = tenant.admin.post("/api/users", {"username": name, "password": PASSWORD})
    agent = tenant.admin.post("/api/agents", {"user_id": user["id"], "queue_ids": [queue_id]})
    creds = tenant.admin.post(f"/api/agents/{agent['id']}/sip-credentials", None)
    return {"id": agent["id"], **creds}


def _register(sipp, real_switch, agent: dict, seconds: int) -> SippProcess:
    """A sipp phone registered as ``agent`` that answers what it is offered (agent-answer-ooc)."""
    port = free_port()
    tag = f"cbagent-{agent['sip_username']}"
    cmd = sipp._base("agent-register.xml", port, tag) + [
        "-oocsf", str(sipp._base("agent-answer-ooc.xml", port, tag)[2]),
        "-s", agent["sip_username"], "-au", agent["sip_username"], "-ap", agent["sip_password"],
        "-key", "domain", agent["sip_domain"], "-d", str(seconds * 1000), "-m", "1",
        "-trace_msg", f"127.0.0.1:{real_switch.ports.agent_sip}"]
    return SippProcess(cmd, sipp.workdir, tag).start()


def _bridged(real_switch, call_id: str) -> bool:
    rows = json.loads(real_switch.api("show calls as json", check=False) or "{}").get("rows") or []
    return any(call_id in (row.get("uuid"), row.get("b_uuid")) for row in rows)


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
    agent = _agent(tenant, queue["id"])
    assert poll(lambda: real_switch.api(f"user_exists id {agent['sip_username']} {agent['sip_domain']}",
                                        check=False).strip() == "true", 15), "directory not applied"
    phone = _register(sipp, real_switch, agent, seconds=40)
    try:
        callback = tenant.admin.post(f"/api/queues/{queue['id']}/callbacks",
                                     {"phone_number": f"+{prefix}5550110", "priority": 5})
        assert callback["status"] == "pending"
        time.sleep(1.0)  # the agent's registration reaches Redis (sofia::register)
        tenant.admin.put(f"/api/agents/{agent['id']}/state", {"state": "available"})

        path = f"/api/queues/{queue['id']}/callbacks/{callback['id']}"
        assert poll(lambda: tenant.admin.get(path)["status"] != "pending", 20), \
            f"never dispatched\n{product.workers.log_tail()}"
        (originate,) = outbound.outbox(owner_engine, "call.originate", "callbackId", callback["id"])
        call_id = originate["payload"]["callId"]
        assert originate["payload"]["agentId"] == agent["id"] and originate["payload"]["attempt"] == 1
        assert poll(lambda: _bridged(real_switch, call_id), 30), \
            f"customer not bridged to the agent\n{product.controller.log_tail()}\n{real_switch.log_tail(60)}"
        final = tenant.admin.get(path)
        assert (final["status"], final["attempts"]) == ("completed", 1), final
        assert tenant.admin.get(f"/api/agents/{agent['id']}")["state"] == "available"
        time.sleep(1.0)  # talk
        real_switch.api(f"uuid_kill {call_id}")  # the customer's side ends the call

        record = poll(lambda: outbound.record(owner_engine, call_id), 20)
        assert record, f"no call record for {call_id}"
        assert (str(record["agent_id"]), str(record["queue_id"])) == (agent["id"], queue["id"])
        assert record["direction"] == "outbound" and record["status"] == "completed", record
        # after-call work (the queue's 1 s), then available again
        states = [e["payload"]["state"] for e in tenant.events("agent.state.changed")
                  if e["payload"]["agentId"] == agent["id"]]
        assert poll(lambda: tenant.admin.get(f"/api/agents/{agent['id']}")["state"] == "available"
                    and "wrap_up" in [e["payload"]["state"] for e in tenant.events("agent.state.changed")
                                      if e["payload"]["agentId"] == agent["id"]], 15), states
    finally:
        result = phone.wait(60)
    assert "INVITE" in result.messages and "ACK" in result.messages, result.errors


def test_a_callback_whose_customer_is_busy_goes_back_to_pending_and_frees_the_agent_at_once(
        product, routing_tenant, carriers, sipp, real_switch, owner_engine):
    """The customer's 486 (USER_BUSY) is a not-reached attempt: the callback is ``pending``
    with one attempt (dialled again after the retry delay), the attempt has its call record,
    and the agent is idle again without after-call work."""
    import redis

    from app.contact.presence import Presence
    from app.settings import get_settings

    tenant = routing_tenant
    prefix = outbound.prefix()
    busy = carriers._start("carrier-busy-486.xml", None)
    carrier_id, gateway_id = outbound.carrier(tenant, "busy-customers", busy.port)
    outbound.route(product, tenant, prefix, [carrier_id])
    outbound.wait_gateways(real_switch, gateway_id)
    queue = tenant.admin.post("/api/queues", {"name": f"cb-{uuid.uuid4().hex[:6]}", "wrap_up_seconds": 30,
                                              "announce_position": False})
    agent = _agent(tenant, queue["id"])
    assert poll(lambda: real_switch.api(f"user_exists id {agent['sip_username']} {agent['sip_domain']}",
                                        check=False).strip() == "true", 15), "directory not applied"
    presence = Presence(redis.Redis.from_url(get_settings().redis_url), get_settings().redis_key_prefix)
    phone = _register(sipp, real_switch, agent, seconds=15)
    try:
        assert poll(lambda: presence.is_registered(agent["sip_domain"], agent["sip_username"]), 10)
        tenant.admin.put(f"/api/agents/{agent['id']}/state", {"state": "available"})
        callback = tenant.admin.post(f"/api/queues/{queue['id']}/callbacks", {"phone_number": f"{prefix}5550111"})
        path = f"/api/queues/{queue['id']}/callbacks/{callback['id']}"
        # the sweep finds it (the agent was available before the callback existed)
        assert poll(lambda: tenant.admin.get(path)["attempts"] == 1
                    and tenant.admin.get(path)["status"] == "pending", 30), \
            f"{tenant.admin.get(path)}\n{product.workers.log_tail()}\n{product.controller.log_tail()}"
        (originate,) = outbound.outbox(owner_engine, "call.originate", "callbackId", callback["id"])
        record = poll(lambda: outbound.record(owner_engine, originate["payload"]["callId"]), 10)
        assert record and record["status"] == "busy" and str(record["agent_id"]) == agent["id"], record
        assert poll(lambda: agent["id"] in presence.idle_agents(str(tenant.account_id)), 10)
        assert presence.engaged_by(str(tenant.account_id), agent["id"]) is None
        assert tenant.admin.get(f"/api/agents/{agent['id']}")["state"] == "available"
    finally:
        phone.wait(30)
