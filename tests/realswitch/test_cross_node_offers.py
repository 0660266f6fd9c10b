"""Cross-node queue offers on the real switch: two FreeSWITCH instances, one controller linked to
both (docs/agents.md "Several FreeSWITCH nodes"). A sipp agent registers on node B; a sipp
caller comes in on node A (the package's switch) and is sent to the queue; node A's leg dials
node B's agent profile, node B's ``agents`` context bridges it to the agent's registration.

Node B is this module's own (tests/realswitch/nodes.py: it shares node A's ``generated/``
folder; the package's controller is restarted with both nodes for the module).
"""
from __future__ import annotations

import uuid
from types import SimpleNamespace

from tests.realswitch import agents as sip_agents
from tests.realswitch import nodes
from tests.realswitch.provision import poll
from tests.realswitch.sipp import Sipp

node_b, two_nodes = nodes.node_b, nodes.two_nodes  # this module's node B (module-scoped fixtures)


def test_given_an_agent_registered_on_node_b_then_a_caller_on_node_a_is_offered_to_it_and_bridged(
        tenant, sipp, real_switch, two_nodes, realswitch_workdir):
    node_b = two_nodes
    queue = tenant.admin.post("/api/queues", {"name": f"xn-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 6,
                                              "wrap_up_seconds": 1, "announce_position": False})
    agent = sip_agents.new_agent(tenant, [queue["id"]])
    for switch in (real_switch, node_b):
        assert poll(lambda s=switch: sip_agents.in_directory(s, agent), 15), "directory not applied"
    phone = sip_agents.register(Sipp(node_b, realswitch_workdir / "sipp-b"), node_b, agent,
                                "agent-answer-ooc.xml", seconds=25)
    try:
        presence = sip_agents.presence()
        registered_on = presence.registered_on(agent.domain, agent.sip_username)
        assert registered_on and registered_on == node_b.api("eval ${core_uuid}").strip()
        assert presence.node_addresses().get(registered_on) == f"127.0.0.1:{node_b.ports.agent_sip}"
        sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        result = sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "6000"))
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["queue_id"]) == queue["id"] and str(record["agent_id"]) == agent.id, \
            f"{record}\nA:\n{real_switch.log_tail(60)}\nB:\n{node_b.log_tail(60)}"
        keys = [e["key"] for e in tenant.events("agent.")
                if e["payload"].get("callId") == str(record["call_id"])]
        assert "agent.accept" in keys and "agent.missed" not in keys, keys
        assert poll(lambda: tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available", 10)
    finally:
        phone_result = phone.wait(40)
    assert "INVITE" in phone_result.messages and "ACK" in phone_result.messages, phone_result.errors
    assert node_b.wait_idle(timeout=20) == 0, node_b.api("show channels")
    assert real_switch.wait_idle(timeout=20) == 0, real_switch.api("show channels")


def test_given_an_invite_to_node_bs_agent_profile_from_outside_the_cluster_then_it_is_challenged(
        tenant, real_switch, two_nodes, realswitch_workdir):
    """The cluster ACL holds the nodes' addresses only (here 127.0.0.1): an INVITE carrying the
    cross-node header from 127.0.0.2 is challenged (407), never bridged to the agent."""
    node_b = two_nodes
    assert node_b.api("acl 127.0.0.2 cluster", check=False).strip() == "false"
    queue = tenant.admin.post("/api/queues", {"name": f"xo-{uuid.uuid4().hex[:6]}"})
    agent = sip_agents.new_agent(tenant, [queue["id"]])
    assert poll(lambda: sip_agents.in_directory(node_b, agent), 15), "directory not applied"
    to_agent_profile = SimpleNamespace(ports=SimpleNamespace(sip=node_b.ports.agent_sip))
    outsider = Sipp(to_agent_profile, realswitch_workdir / "sipp-outsider")  # type: ignore[arg-type]
    result = outsider.call(agent.sip_username, scenario="uac-cross-node-offer.xml", source_ip="127.0.0.2",
                           extra=("-key", "xdomain", agent.domain), timeout=30)
    assert not result.ok and result.refusal == 407, result.errors or result.stdout[-1500:]
    assert node_b.wait_idle(timeout=10) == 0
