"""An agent phone (sipp, agent-register.xml) registering on the real switch's agent profile is
visible: ``GET /api/agents/:id`` shows its contact, transport, expiry and last change, and
``user.registered`` then ``user.unregistered`` (when it sends Expires: 0) are published once
each, with the account's agent."""
from __future__ import annotations

import uuid

from tests.realswitch import agents as sip_agents
from tests.realswitch.provision import poll


def test_an_agent_phone_registering_shows_in_the_api_and_publishes_user_registered_then_unregistered(
        tenant, sipp, real_switch):
    queue = tenant.admin.post("/api/queues", {"name": f"rg-{uuid.uuid4().hex[:6]}"})
    agent = sip_agents.new_agent(tenant, [queue["id"]])
    assert poll(lambda: sip_agents.in_directory(real_switch, agent), 15), "directory not applied"
    phone = sip_agents.register(sipp, real_switch, agent, seconds=3)
    shown = tenant.admin.get(f"/api/agents/{agent.id}")["registration"]
    assert shown["registered"] is True and shown["transport"] == "udp", shown
    assert f"sip:{agent.sip_username}@127.0.0.1:{phone.port}" in shown["contact"], shown
    assert shown["expires_at"] > shown["changed_at"]
    assert phone.wait(30).ok
    assert poll(lambda: not tenant.admin.get(f"/api/agents/{agent.id}")["registration"]["registered"], 10)

    def mine() -> list[dict]:
        return [e for e in tenant.events("user.") if e["payload"]["agentId"] == agent.id]

    assert poll(lambda: len(mine()) >= 2, 10), mine()
    events = mine()
    assert [e["key"] for e in events] == ["user.registered", "user.unregistered"]
    assert events[0]["payload"]["contact"] == shown["contact"]
    assert (events[1]["payload"]["reason"], events[1]["payload"]["registered"]) == ("unregistered", False)
    assert agent.sip_password not in str(events)
