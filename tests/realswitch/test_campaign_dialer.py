"""Campaigns dial on the real switch: a progressive campaign started through the API is paced by
the real ``sbc workers`` (app/campaigns/dialer.py), which reserves the registered agent (a sipp
phone on the ``internal`` profile) and publishes ``call.originate``; the controller rings the
customer (a sipp carrier) through least-cost routing with the campaign's caller ID, and the
answered customer's leg dials the reserved agent and is bridged to it: 1:1. Then the contact is
``completed`` (outcome ``human``) and the campaign finishes. A busy customer (486) is dialled
again per the campaign's busy rule (1 s later, 2 attempts at most) and ends ``failed``. Two
``sbc workers`` dial one campaign's contacts once each, and the lease holder killed (SIGKILL)
mid-call loses nothing: the other one applies the call's outcome from the durable queue and,
once the dead one's lease lapsed, dials the next contact.

The calling window holds whatever the hour of the run: each contact's zone is the ``Etc/GMT``
zone where it is about noon now."""
from __future__ import annotations

import signal
import subprocess
import time
import uuid
from datetime import datetime, timezone

from app import limits
from app.campaigns.measures import CampaignMeasures
from app.campaigns.safe_harbour import ABANDONED_REASON
from app.settings import get_settings
from tests.realswitch import agents as sip_agents
from tests.realswitch import outbound
from tests.realswitch.hold_audio import CallerEar
from tests.realswitch.product import ProductProcess
from tests.realswitch.provision import poll, unique_number

SAFE_HARBOUR = "This is Acme Renewals calling. Sorry, nobody is free to talk right now. We will call you again."


def _noon_zone() -> str:
    """An IANA zone whose local time is between 11:00 and 13:00 now (Etc/GMT-N is UTC+N)."""
    offset = 12 - datetime.now(timezone.utc).hour
    offset = offset - 24 if offset > 14 else offset
    return f"Etc/GMT{-offset:+d}" if offset else "Etc/GMT"


def _trunk_and_agent(product, tenant, real_switch, carrier, wrap_up_seconds: int) -> tuple[str, str, dict, object]:
    """(number prefix, carrier id, agent group, agent): a carrier to ``carrier`` (a sipp UAS)
    routed for a new prefix, and a new agent in a new group, in the switch's directory."""
    prefix = outbound.prefix()
    carrier_id, gateway_id = outbound.carrier(tenant, f"campaign-{prefix}", carrier.port)
    outbound.route(product, tenant, prefix, [carrier_id])
    outbound.wait_gateways(real_switch, gateway_id)
    queue = tenant.admin.post("/api/queues", {"name": f"camp-{uuid.uuid4().hex[:6]}",
                                              "wrap_up_seconds": wrap_up_seconds, "announce_position": False})
    agent = sip_agents.new_agent(tenant, [queue["id"]], prefix="cp")
    assert poll(lambda: sip_agents.in_directory(real_switch, agent), 15), "directory not applied"
    return prefix, carrier_id, queue, agent


def _campaign(tenant, carrier_id: str, queue_id: str, *numbers: str, retry_policy: dict | None = None,
              dialer_mode: str = "progressive", **settings: object) -> dict:
    caller_id = unique_number()
    tenant.admin.post("/api/phone-numbers", {"number": caller_id})
    body = {"name": f"camp-{uuid.uuid4().hex[:6]}", "dialer_mode": dialer_mode, "caller_id": caller_id,
            "carrier_id": carrier_id, "agent_group_ids": [queue_id], **settings}
    if retry_policy:
        body["retry_policy"] = retry_policy
    campaign = tenant.admin.post("/api/campaigns", body)
    for number in numbers:  # one request each: dialled in this order
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/contacts",
                          {"contacts": [{"phone_number": f"+{number}", "time_zone": _noon_zone()}]})
    return campaign


def _contacts(tenant, campaign: dict) -> dict[str, str]:
    """phone number (digits) → status."""
    items = tenant.admin.get(f"/api/campaigns/{campaign['id']}/contacts")["items"]
    return {c["phone_number"].lstrip("+"): c["status"] for c in items}


def _contact(tenant, campaign: dict) -> dict:
    (contact,) = tenant.admin.get(f"/api/campaigns/{campaign['id']}/contacts")["items"]
    return contact


def _kill_workers(workers: ProductProcess) -> None:
    """SIGKILL an ``sbc workers`` as an OOM kill would, and its media-worker children (by pid) so
    that none is left behind."""
    if not workers.alive():
        return
    children = subprocess.run(["pgrep", "-P", str(workers.pid)], capture_output=True, text=True).stdout
    workers.stop(signal.SIGKILL)
    for pid in children.split():
        subprocess.run(["kill", "-9", pid], check=False)


def test_a_progressive_campaign_dials_one_customer_for_its_reserved_agent_and_bridges_them(
        product, routing_tenant, carriers, sipp, real_switch, owner_engine):
    tenant = routing_tenant
    prefix, carrier_id, queue, agent = _trunk_and_agent(product, tenant, real_switch,
                                                        carriers.answering("PCMU"), wrap_up_seconds=1)
    phone = sip_agents.register(sipp, real_switch, agent, seconds=40)
    campaign = _campaign(tenant, carrier_id, queue["id"], f"{prefix}5550120")
    call_id = None
    try:
        tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/start", {})
        originates = poll(lambda: outbound.outbox(owner_engine, "call.originate", "agentId", agent.id), 20)
        assert originates, f"never dialled\n{product.workers.log_tail()}"
        (originate,) = originates
        call_id = originate["payload"]["callId"]
        assert originate["payload"]["from"] == campaign["caller_id"]
        assert originate["payload"]["phoneNumber"] == f"{prefix}5550120"
        assert poll(lambda: outbound.bridged(real_switch, call_id), 30), \
            f"customer not bridged to the agent\n{product.controller.log_tail()}\n{real_switch.log_tail(60)}"
        assert _contact(tenant, campaign)["status"] == "in_progress"
        time.sleep(1.0)  # scenario: talk
        real_switch.api(f"uuid_kill {call_id}")  # the customer's side ends the call

        assert poll(lambda: _contact(tenant, campaign)["status"] == "completed", 20), _contact(tenant, campaign)
        (attempt,) = [e["payload"] for e in tenant.events("campaign.attempt")
                      if e["payload"]["campaignId"] == campaign["id"]]
        assert (attempt["outcome"], attempt["attempt"]) == ("human", 1)
        record = poll(lambda: outbound.record(owner_engine, call_id), 20)
        assert record and str(record["agent_id"]) == agent.id and record["status"] == "completed", record
        # one call only: the agent was the campaign's one line
        assert len(outbound.outbox(owner_engine, "call.originate", "agentId", agent.id)) == 1
        assert poll(lambda: tenant.admin.get(f"/api/campaigns/{campaign['id']}")["status"] == "completed", 10)
    finally:
        if call_id is not None:
            real_switch.api(f"uuid_kill {call_id}", check=False)
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/stop", {}, expect=(200, 409))
        result = phone.wait(60)
    assert "INVITE" in result.messages and "ACK" in result.messages, result.errors


def test_a_busy_customer_is_dialled_again_per_the_busy_rule_and_fails_after_its_last_attempt(
        product, routing_tenant, carriers, sipp, real_switch, owner_engine):
    tenant = routing_tenant
    prefix, carrier_id, queue, agent = _trunk_and_agent(product, tenant, real_switch,
                                                        carriers._start("carrier-busy-486.xml", None),
                                                        wrap_up_seconds=30)
    presence = sip_agents.presence()
    phone = sip_agents.register(sipp, real_switch, agent, seconds=20)
    campaign = _campaign(tenant, carrier_id, queue["id"], f"{prefix}5550121",
                         retry_policy={"busy": {"delay_seconds": 1, "max_attempts": 2}})
    try:
        assert poll(lambda: presence.is_registered(agent.domain, agent.sip_username), 10)
        tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/start", {})
        assert poll(lambda: _contact(tenant, campaign)["status"] == "failed", 40), \
            f"{_contact(tenant, campaign)}\n{product.workers.log_tail()}\n{product.controller.log_tail()}"
        attempts = [(e["payload"]["outcome"], e["payload"]["attempt"], e["payload"]["contactStatus"])
                    for e in tenant.events("campaign.attempt") if e["payload"]["campaignId"] == campaign["id"]]
        assert attempts == [("busy", 1, "pending"), ("busy", 2, "failed")]
        calls = [o["payload"]["callId"] for o in outbound.outbox(owner_engine, "call.originate", "agentId", agent.id)]
        assert len(calls) == 2
        for call_id in calls:
            record = poll(lambda: outbound.record(owner_engine, call_id), 10)
            assert record and record["status"] == "busy", record
        # the agent is given back without after-call work after each busy attempt
        assert poll(lambda: agent.id in presence.idle_agents(str(tenant.account_id)), 10)
        assert tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available"
    finally:
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/stop", {}, expect=(200, 409))
        phone.wait(30)


def test_two_workers_processes_dial_each_contact_once_and_when_the_lease_holder_is_killed_the_other_dials_on(
        product, routing_tenant, carriers, sipp, real_switch, owner_engine):
    """Two ``sbc workers`` run the dialer at once (the product's and a second one); whichever holds
    the campaign's lease is SIGKILLed mid-call. The other one, running all along, applies the
    call's outcome from the durable queue, takes the campaign once the dead holder's lease
    lapsed, and dials the next contact: each contact dialled once, nothing lost."""
    tenant = routing_tenant
    prefix, carrier_id, queue, agent = _trunk_and_agent(product, tenant, real_switch,
                                                        carriers.answering("PCMU"), wrap_up_seconds=0)
    phone = sip_agents.register(sipp, real_switch, agent, seconds=45)
    first, second = f"{prefix}5550122", f"{prefix}5550123"
    campaign = _campaign(tenant, carrier_id, queue["id"], first, second)
    other = ProductProcess("workers-other", ["workers"], product.env, product.logdir).start()
    presence = sip_agents.presence()
    lease_key = f"{presence.prefix}campaign:lease:{campaign['id']}"
    call_ids: list[str] = []
    try:
        tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/start", {})
        originates = poll(lambda: outbound.outbox(owner_engine, "call.originate", "agentId", agent.id), 20)
        assert originates, f"never dialled\n{product.workers.log_tail()}\n{other.log_tail()}"
        call_ids.append(originates[0]["payload"]["callId"])
        assert originates[0]["payload"]["phoneNumber"] == first
        assert poll(lambda: outbound.bridged(real_switch, call_ids[0]), 30), product.controller.log_tail()

        holder_pid = int(presence.redis.get(lease_key).decode().rsplit(":", 1)[1])
        by_pid = {product.workers.pid: (product.workers, other), other.pid: (other, product.workers)}
        assert holder_pid in by_pid, (holder_pid, list(by_pid))
        holder, survivor = by_pid[holder_pid]
        _kill_workers(holder)  # mid-call: its lease stays in Redis until the TTL
        real_switch.api(f"uuid_kill {call_ids[0]}")  # the call ends while only the other one runs

        assert poll(lambda: _second_bridged(real_switch, owner_engine, agent, call_ids), 60), \
            f"{_contacts(tenant, campaign)}\n{survivor.log_tail()}"
        assert int(presence.redis.get(lease_key).decode().rsplit(":", 1)[1]) == survivor.pid
        assert _contacts(tenant, campaign)[first] == "completed"
        real_switch.api(f"uuid_kill {call_ids[1]}")
        assert poll(lambda: _contacts(tenant, campaign) == {first: "completed", second: "completed"}, 20), \
            _contacts(tenant, campaign)
        attempts = [(e["payload"]["contactId"], e["payload"]["outcome"]) for e in tenant.events("campaign.attempt")
                    if e["payload"]["campaignId"] == campaign["id"]]
        assert [outcome for _, outcome in attempts] == ["human", "human"] and len({c for c, _ in attempts}) == 2
        assert len(outbound.outbox(owner_engine, "call.originate", "agentId", agent.id)) == 2  # never twice
    finally:
        other.stop()
        if not product.workers.alive():
            product.workers.start()
        for call_id in call_ids:
            real_switch.api(f"uuid_kill {call_id}", check=False)
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/stop", {}, expect=(200, 409))
        phone.wait(90)


def _second_bridged(real_switch, owner_engine, agent, call_ids: list[str]) -> bool:
    """The second contact's call is up and bridged to the agent (its id kept in ``call_ids``)."""
    originates = outbound.outbox(owner_engine, "call.originate", "agentId", agent.id)
    if len(originates) < 2:
        return False
    call_id = originates[1]["payload"]["callId"]
    if not outbound.bridged(real_switch, call_id):
        return False
    call_ids.append(call_id)
    return True


def test_a_power_campaign_dials_two_customers_for_its_free_agent_bridges_one_and_abandons_the_other_after_2_s(
        product, routing_tenant, sipp, real_switch, owner_engine, redis_client):
    """Power 2:1 with one free agent: two customers dialled at once, no agent reserved. The
    first to answer takes the agent through the queue's claim; the other waits 2 s, hears the
    campaign's safe-harbour message (measured on the customer's RTP) and is hung up:
    ``abandoned``, to be dialled again per its rule."""
    tenant = routing_tenant
    with CallerEar() as ear:
        customers = sipp.carrier(scenario="carrier-answer-listen.xml", extra=("-key", "rtp_port", str(ear.port)))
        try:
            _power_2_to_1(product, tenant, real_switch, sipp, owner_engine, redis_client, customers, ear)
        finally:
            customers.stop()


def _power_2_to_1(product, tenant, real_switch, sipp, owner_engine, redis_client, customers, ear: CallerEar) -> None:
    prefix, carrier_id, queue, agent = _trunk_and_agent(product, tenant, real_switch, customers, wrap_up_seconds=30)
    phone = sip_agents.register(sipp, real_switch, agent, seconds=40)
    numbers = (f"{prefix}5550130", f"{prefix}5550131")
    campaign = _campaign(tenant, carrier_id, queue["id"], *numbers, dialer_mode="power", power_ratio=2,
                         safe_harbour_text=SAFE_HARBOUR)
    call_ids: list[str] = []
    try:
        tenant.admin.put(f"/api/agents/{agent.id}/state", {"state": "available"})
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/start", {})
        originates = poll(lambda: len(_campaign_originates(owner_engine, campaign)) == 2
                          and _campaign_originates(owner_engine, campaign), 20)
        assert originates, f"not 2 calls: {_campaign_originates(owner_engine, campaign)}\n{product.workers.log_tail()}"
        payloads = [o["payload"] for o in originates]
        call_ids.extend(p["callId"] for p in payloads)
        assert sorted(p["phoneNumber"] for p in payloads) == sorted(numbers)
        assert {(p["agentId"], p["carrierId"], p["from"]) for p in payloads} == {(None, carrier_id, campaign["caller_id"])}

        bridged = poll(lambda: [c for c in call_ids if outbound.bridged(real_switch, c)], 30)
        assert len(bridged) == 1, f"{bridged}\n{product.controller.log_tail()}\n{real_switch.log_tail(60)}"
        (abandoned_id,) = set(call_ids) - set(bridged)
        record = poll(lambda: outbound.record(owner_engine, abandoned_id), 30)
        assert record and record["hangup_reason"] == ABANDONED_REASON and record["agent_id"] is None, record
        assert outbound.bridged(real_switch, bridged[0])  # the agent's call goes on
        # what the pacer sees now: the connected call talking (agent.accept), the abandoned one gone
        measures = CampaignMeasures(redis_client, get_settings().redis_key_prefix)
        seen = poll(lambda: (calls := measures.in_flight(campaign["id"], time.time())).talking and calls, 10) \
            or measures.in_flight(campaign["id"], time.time())
        assert (seen.ringing, seen.screening, seen.connecting, len(seen.talking)) == ((), (), (), 1), seen
        time.sleep(1.0)  # scenario: the connected customer talks a little more
        real_switch.api(f"uuid_kill {bridged[0]}")

        contacts = poll(lambda: _settled(tenant, campaign), 20)
        assert contacts, tenant.admin.get(f"/api/campaigns/{campaign['id']}/contacts")
        outcomes = {c["phone_number"].lstrip("+"): (c["status"], c["last_result"]) for c in contacts}
        by_call = {p["callId"]: p["phoneNumber"] for p in payloads}
        assert outcomes == {by_call[bridged[0]]: ("completed", "human"), by_call[abandoned_id]: ("pending", "abandoned")}
        attempts = sorted(e["payload"]["outcome"] for e in tenant.events("campaign.attempt")
                          if e["payload"]["campaignId"] == campaign["id"])
        assert attempts == ["abandoned", "human"]
        connected = outbound.record(owner_engine, bridged[0])
        assert str(connected["agent_id"]) == agent.id and connected["talk_ms"] > 0, connected

        # what the abandoned customer heard: the 2 s wait (hold music), then the message
        streams = sorted(ear.streams().values(), key=lambda packets: -ear.loud_seconds(
            packets[0][0], packets[-1][0] + 1, packets))
        heard = streams[0]
        start, end = heard[0][0], heard[-1][0]
        message = ear.loud_seconds(start + limits.CAMPAIGN_ABANDON_CONNECT_SECONDS + 0.1, end + 1, heard)
        print(f"abandoned customer: {end - start:.2f} s of audio, {message:.2f} s loud after the "
              f"{limits.CAMPAIGN_ABANDON_CONNECT_SECONDS:g} s wait; streams: {len(ear.streams())}")
        assert message >= 2.5, f"the safe-harbour message was not heard: {message:.2f} s"
        assert end - start >= limits.CAMPAIGN_ABANDON_CONNECT_SECONDS + message - 0.2
    finally:
        for call_id in call_ids:
            real_switch.api(f"uuid_kill {call_id}", check=False)
        tenant.admin.post(f"/api/campaigns/{campaign['id']}/stop", {}, expect=(200, 409))
        phone.wait(60)


def _campaign_originates(owner_engine, campaign: dict) -> list[dict]:
    return outbound.outbox(owner_engine, "call.originate", "campaignId", campaign["id"])


def _settled(tenant, campaign: dict) -> list[dict] | None:
    """The campaign's contacts once none is in progress."""
    items = tenant.admin.get(f"/api/campaigns/{campaign['id']}/contacts")["items"]
    return items if all(c["status"] != "in_progress" for c in items) else None
