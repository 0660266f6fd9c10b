"""Preview mode on the real switch: a preview campaign started through the API is paced by the
real ``sbc workers``, which offers the contact to the registered sipp agent on its agent channel
(the real ``sbc api``); nothing is dialled until the agent's ``accept``. Then the controller
rings the customer (a sipp carrier) with the campaign's caller ID, the answered customer's leg
dials the agent who accepted, and they are bridged; after the call the contact is ``completed``,
its call record names the campaign and the contact, and the live figures count one human
answer."""
from __future__ import annotations

import time
import uuid

from tests.agent_channel.client import ChannelClient
from tests.realswitch import agents as sip_agents
from tests.realswitch import outbound
from tests.realswitch.provision import poll, unique_number
from tests.realswitch.test_campaign_dialer import _noon_zone, _trunk_and_agent


def test_a_preview_contact_accepted_on_the_channel_is_dialled_and_bridged_to_that_agent(
        product, routing_tenant, carriers, sipp, real_switch, owner_engine):
    tenant = routing_tenant
    prefix, carrier_id, queue, agent = _trunk_and_agent(product, tenant, real_switch,
                                                        carriers.answering("PCMU"), wrap_up_seconds=1)
    phone = sip_agents.register(sipp, real_switch, agent, seconds=50)
    caller_id = unique_number()
    tenant.admin.post("/api/phone-numbers", {"number": caller_id})
    campaign = tenant.admin.post("/api/campaigns", {
        "name": f"preview-{uuid.uuid4().hex[:6]}", "dialer_mode": "preview", "caller_id": caller_id,
        "carrier_id": carrier_id, "agent_group_ids": [queue["id"]]})
    tenant.admin.post(f"/api/campaigns/{campaign['id']}/contacts", {"contacts": [
        {"phone_number": f"+{prefix}5550130", "name": "Grace Hopper", "time_zone": _noon_zone(),
         "attributes": {"plan": "gold"}}]})
    client = ChannelClient(product.api_port, f"{tenant.subdomain}.localhost")
    client.auth(sip_agents.login_token(product, tenant, agent))
    call_id = None
    try:
        tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/start", {})
        offer = client.expect("offer", lambda m: m.get("kind") == "preview", timeout=20)
        assert (offer["contact"]["name"], offer["contact"]["phoneNumber"], offer["contact"]["attributes"]) == (
            "Grace Hopper", f"+{prefix}5550130", {"plan": "gold"})
        time.sleep(2.0)  # scenario: the agent reads the contact; nothing may be dialled meanwhile
        assert outbound.outbox(owner_engine, "call.originate", "agentId", agent.id) == []

        ack = client.command("accept", offerId=offer["offerId"])
        assert ack["ok"] is True, ack
        call_id = ack["callId"]
        originates = poll(lambda: outbound.outbox(owner_engine, "call.originate", "agentId", agent.id), 20)
        assert originates, f"never dialled\n{product.workers.log_tail()}"
        (originate,) = originates
        assert (originate["payload"]["callId"], originate["payload"]["from"]) == (call_id, caller_id)
        assert poll(lambda: outbound.bridged(real_switch, call_id), 30), \
            f"customer not bridged to the agent\n{product.controller.log_tail()}\n{real_switch.log_tail(60)}"
        time.sleep(1.0)  # scenario: talk
        real_switch.api(f"uuid_kill {call_id}")  # the customer's side ends the call

        def contact() -> dict:
            (row,) = tenant.admin.get(f"/api/campaigns/{campaign['id']}/contacts")["items"]
            return row

        assert poll(lambda: contact()["status"] == "completed", 20), contact()
        record = poll(lambda: (r := outbound.record(owner_engine, call_id)) and r["campaign_id"] and r, 20)
        assert record, outbound.record(owner_engine, call_id)
        assert (str(record["agent_id"]), str(record["campaign_id"]), str(record["contact_id"])) == (
            agent.id, campaign["id"], contact()["id"])
        figures = tenant.admin.get(f"/api/campaigns/{campaign['id']}/figures")
        assert (figures["attempts"]["dialled"], figures["attempts"]["human"], figures["contacts"]["left"]) == (1, 1, 0)
    finally:
        client.close()
        if call_id is not None:
            real_switch.api(f"uuid_kill {call_id}", check=False)
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/stop", {}, expect=(200, 409))
        result = phone.wait(60)
    assert "INVITE" in result.messages and "ACK" in result.messages, result.errors
