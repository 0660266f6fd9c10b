"""The contact centre on the real switch: agents register on the ``internal`` profile with the
SIP credentials the API generated (digest against the generated directory), a trunk caller
sent to a configured queue is offered to the longest-idle registered agent, the agent answers
and is bridged; an agent who lets the offer ring out is ``agent.missed`` and the next agent
gets the caller. sipp plays the agents (agent-register.xml + an out-of-call offer scenario)."""
from __future__ import annotations

import time
import uuid

import pytest

from app.media.moh import DEFAULT_FILE, DEFAULT_NAME
from tests.realswitch import agents as sip_agents
from tests.realswitch.product import wait_for_port
from tests.realswitch.provision import poll
from tests.realswitch.sip_over_ws import wss_registration


@pytest.fixture
def contact_queue(tenant, real_switch):
    """A queue with a 4 s offer timeout and 1 s after-call work, and two agents with SIP
    credentials whose directory entries have reached the switch."""
    queue = tenant.admin.post("/api/queues", {"name": f"cc-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 4,
                                              "wrap_up_seconds": 1, "announce_position": False})
    agents = [sip_agents.new_agent(tenant, [queue["id"]]) for _ in range(2)]
    for agent in agents:
        assert poll(lambda a=agent: sip_agents.in_directory(real_switch, a), 15), "directory not applied"
    return queue, agents


def test_a_trunk_caller_sent_to_a_queue_is_offered_to_the_registered_agent_who_answers_and_is_bridged(
        tenant, contact_queue, sipp, real_switch):
    queue, (agent, _unregistered) = contact_queue
    phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-ooc.xml", seconds=25)
    try:
        sip_agents.make_available(tenant, agent)
        sip_agents.make_available(tenant, _unregistered)  # available but not registered: never offered
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        result = sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "6000"))
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["queue_id"]) == queue["id"] and str(record["agent_id"]) == agent.id
        events = [e for e in tenant.events("agent.") + tenant.events("queue.") if e["payload"].get("callId") == str(record["call_id"])]
        keys = [e["key"] for e in events]
        for key in ("queue.caller.enqueued", "queue.assignment", "agent.offer", "agent.accept"):
            assert key in keys, keys
        assert "agent.missed" not in keys
        offered = {e["payload"]["agentId"] for e in events if e["key"] == "agent.offer"}
        assert offered == {agent.id}
        assert poll(lambda: tenant.admin.get(f"/api/agents/{agent.id}")["state"] == "available", 10)
    finally:
        phone_result = phone.wait(40)
    assert "INVITE" in phone_result.messages and "ACK" in phone_result.messages, phone_result.errors
    # the phone unregistered at the end (Expires: 0): sofia::unregister cleared its registration
    assert poll(lambda: not sip_agents.presence().is_registered(agent.domain, agent.sip_username), 5)


def test_an_agent_who_lets_the_offer_ring_out_is_missed_and_the_next_agent_gets_the_caller(
        tenant, contact_queue, sipp, real_switch):
    queue, (ringer, answerer) = contact_queue
    phones = [sip_agents.register(sipp, real_switch, ringer, "agent-ring-ooc.xml", seconds=30),
              sip_agents.register(sipp, real_switch, answerer, "agent-answer-ooc.xml", seconds=30)]
    try:
        sip_agents.make_available(tenant, ringer)    # longest idle: offered first
        sip_agents.make_available(tenant, answerer)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        result = sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "12000"))
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["agent_id"]) == answerer.id
        events = [e for e in tenant.events("agent.") if e["payload"].get("callId") == str(record["call_id"])]
        sequence = [(e["key"], e["payload"]["agentId"]) for e in events]
        assert sequence == [("agent.offer", ringer.id), ("agent.missed", ringer.id),
                            ("agent.offer", answerer.id), ("agent.accept", answerer.id)], sequence
        assert tenant.admin.get(f"/api/agents/{ringer.id}")["state"] == "available"  # 1 miss of 3
    finally:
        results = [p.wait(45) for p in phones]
    assert "CANCEL" in results[0].messages, results[0].errors


def test_the_agent_profile_listens_for_browsers_on_wss_with_the_configured_port(real_switch):
    status = real_switch.api("sofia status profile internal")
    assert f":{real_switch.ports.agent_wss};transport=wss" in status, status
    assert f":{real_switch.ports.agent_sip};maddr=" in status, status


def test_agents_still_register_while_the_api_is_down(tenant, contact_queue, sipp, real_switch, product):
    """The directory is a file on the switch (docs/agents.md): no API round trip per REGISTER."""
    _queue, (agent, _other) = contact_queue
    product.api.stop()
    try:
        phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-ooc.xml", seconds=1)
        assert phone.wait(20).ok
    finally:
        product.api.start()
        assert wait_for_port(product.api_port)


def test_a_browser_agent_registers_over_wss_with_its_generated_credentials(tenant, contact_queue, real_switch):
    """SIP over WebSocket (what the SDK's SIP stack sends): digest against the directory, a
    wrong password refused, and the registration gone with the WebSocket."""
    _queue, (agent, _other) = contact_queue
    wss = real_switch.ports.agent_wss
    with wss_registration("127.0.0.1", wss, agent.sip_username, "wrong-password", agent.domain) as refused:
        assert refused[-1] in (401, 403)
    with wss_registration("127.0.0.1", wss, agent.sip_username, agent.sip_password, agent.domain,
                          expires=30) as statuses:
        assert statuses == [401, 200]
        assert poll(lambda: sip_agents.presence().is_registered(agent.domain, agent.sip_username), 15)
    # the WebSocket closed (a browser tab gone): sofia unregisters it, no call is offered to it
    assert poll(lambda: not sip_agents.presence().is_registered(agent.domain, agent.sip_username), 15)


def test_a_caller_who_hangs_up_while_the_agent_rings_is_abandoned_and_the_agent_is_not_missed(
        tenant, contact_queue, sipp, real_switch):
    queue, (ringer, _other) = contact_queue
    phone = sip_agents.register(sipp, real_switch, ringer, "agent-ring-ooc.xml", seconds=12)
    try:
        sip_agents.make_available(tenant, ringer)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        # the offer starts at once (4 s offer timeout); the caller leaves 2 s after the answer
        result = sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "2000"))
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert record["agent_id"] is None
        events = [e for e in tenant.events("agent.") + tenant.events("queue.caller.")
                  if e["payload"].get("callId") == str(record["call_id"])]
        keys = [e["key"] for e in events]
        assert "agent.offer" in keys and "queue.caller.abandoned" in keys, keys
        assert "agent.missed" not in keys and "agent.accept" not in keys, keys
        presence = sip_agents.presence()
        assert presence.engaged_by(str(tenant.account_id), ringer.id) is None
        assert ringer.id in presence.idle_agents(str(tenant.account_id))
    finally:
        ring = phone.wait(30)
    assert "CANCEL" in ring.messages, ring.errors


def test_a_queue_call_answered_by_an_agent_and_held_once_measures_its_interaction_summary_and_segment(
        tenant, contact_queue, sipp, real_switch):
    """IVR (a 1 s pause before the queue), the agent answers at once, the caller holds once for
    1.5 s (re-INVITE sendonly, then sendrecv) and hangs up; the 1 s wrap-up then ends. The
    summary and the agent's segment, read through GET /api/call-records/:id: values within the
    scenario's bounds (sanity, not timing)."""
    queue, (agent, _other) = contact_queue
    phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-ooc.xml", seconds=25)
    try:
        sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "pause", "length": 1}, {"verb": "queue", "name": queue["name"]}])
        result = sipp.call(number, scenario="uac-hold-bye.xml")
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["queue_id"]) == queue["id"] and str(record["agent_id"]) == agent.id
        # the wrap-up (1 s) ends after the call: ACW and AHT are added then
        path = f"/api/call-records/{record['public_id']}"
        detail = poll(lambda: (d := tenant.admin.get(path)) and d["summary"] and d["summary"]["acw_ms"] > 0 and d, 15)
        assert detail, f"no after-call work measured: {tenant.admin.get(path)}"
        summary = detail["summary"]
        assert 800 <= summary["ivr_ms"] <= 4000, summary
        assert 0 <= summary["queue_wait_ms"] <= 4000, summary
        assert summary["connect_latency_ms"] is not None and 0 < summary["connect_latency_ms"] <= 4000, summary
        assert summary["hold_count"] == 1 and 1000 <= summary["hold_ms"] <= 3000, summary
        # 2.5 s + 2 s unheld, bridged (the offer must follow the claim at once: a uuid_break
        # lost before the hold music started once cost 0.5 s here, app/verbs/hold_music.py)
        assert 2500 <= summary["talk_ms"] <= 8000, summary
        assert 800 <= summary["acw_ms"] <= 5000, summary
        assert summary["aht_ms"] == summary["talk_ms"] + summary["hold_ms"] + summary["acw_ms"], summary
        assert (summary["abandoned"], summary["short_abandon"], summary["transfer_count"]) == (False, False, 0)
        (segment,) = detail["segments"]
        assert segment["agent_id"] == agent.id and segment["call_id"] == str(record["call_id"])
        assert (segment["talk_ms"], segment["hold_ms"], segment["acw_ms"]) == \
            (summary["talk_ms"], summary["hold_ms"], summary["acw_ms"])
        assert segment["handle_ms"] == summary["aht_ms"] and segment["ended_at"] is not None
    finally:
        phone.wait(40)


def test_a_hold_on_the_agents_leg_is_counted_on_the_callers_interaction_summary(
        tenant, contact_queue, sipp, real_switch):
    """uuid_hold on the agent's leg (what the agent channel's hold does): CHANNEL_HOLD/UNHOLD
    fire on that leg only; the controller's inbound connection relays them to the caller's
    session (app/voice/agent_holds.py). The caller hears the queue's music meanwhile (the
    agent's leg's hold_music), not the profile's local_stream://moh."""
    queue, (agent, _other) = contact_queue
    phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-ooc.xml", seconds=25)
    try:
        sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        caller = sipp.start_calls(number, scenario="uac-bye-after.xml", extra=("-d", "7000"))
        presence = sip_agents.presence()
        leg = poll(lambda: presence.agent_leg(str(tenant.account_id), agent.id), 10)
        assert leg, "the agent's leg was never bridged"
        assert poll(lambda: real_switch.api(f"uuid_exists {leg[1]}", check=False).strip() == "true", 5)
        time.sleep(1.0)  # scenario: talk first (a hold right after the bridge loses its unhold)
        queue_music = str(real_switch.workdir / "moh" / DEFAULT_NAME / DEFAULT_FILE)  # the queue's moh: default
        assert real_switch.api(f"uuid_getvar {leg[1]} hold_music", check=False).strip() == queue_music
        log_offset = real_switch.log_offset()
        assert "+OK" in real_switch.api(f"uuid_hold {leg[1]}", check=False)
        time.sleep(1.5)  # scenario: the hold lasts 1.5 s (hold_ms asserted below)
        assert "+OK" in real_switch.api(f"uuid_hold off {leg[1]}", check=False)
        result = caller.wait(30)
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        summary = poll(lambda: tenant.admin.get(f"/api/call-records/{record['public_id']}")["summary"], 10)
        assert summary["hold_count"] == 1 and 1000 <= summary["hold_ms"] <= 3500, summary
        assert summary["talk_ms"] > 0 and str(record["agent_id"]) == agent.id, summary
        played = [line for line in real_switch.log_since(log_offset).splitlines()
                  if " EXECUTE " in line and "sofia/external/" in line and "playback(" in line]
        assert played and all(f"playback({queue_music})" in line for line in played), played
    finally:
        phone.wait(40)


def test_a_ring_all_queue_rings_both_agents_at_once_the_first_to_answer_wins_and_the_other_stops_ringing_unmissed(
        tenant, contact_queue, sipp, real_switch):
    """strategy ring_all: one bridge with ','-separated legs to both registered agents. The
    answering phone is bridged; FreeSWITCH cancels the other leg (its phone gets CANCEL), which
    is neither missed nor rejected and is idle again at once (docs/agents.md "Strategies")."""
    queue, (ringer, answerer) = contact_queue
    tenant.admin.patch(f"/api/queues/{queue['id']}", {"strategy": "ring_all"})
    phones = [sip_agents.register(sipp, real_switch, ringer, "agent-ring-ooc.xml", seconds=25),
              sip_agents.register(sipp, real_switch, answerer, "agent-answer-ooc.xml", seconds=25)]
    try:
        sip_agents.make_available(tenant, ringer)
        sip_agents.make_available(tenant, answerer)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        caller = sipp.start_calls(number, scenario="uac-bye-after.xml", extra=("-d", "6000"))
        presence = sip_agents.presence()
        account = str(tenant.account_id)
        # while the caller talks to the answerer, the ringer is already free again
        assert poll(lambda: presence.engaged_by(account, answerer.id) is not None
                    and ringer.id in presence.idle_agents(account), 10), \
            (presence.engaged_by(account, ringer.id), presence.idle_agents(account))
        assert presence.engaged_by(account, ringer.id) is None
        result = caller.wait(30)
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["agent_id"]) == answerer.id
        events = [e for e in tenant.events("agent.") if e["payload"].get("callId") == str(record["call_id"])]
        offered = sorted(e["payload"]["agentId"] for e in events if e["key"] == "agent.offer")
        assert offered == sorted([ringer.id, answerer.id]), events
        assert [e["payload"]["agentId"] for e in events if e["key"] == "agent.accept"] == [answerer.id]
        assert not [e for e in events if e["key"] in ("agent.missed", "agent.reject")], events
        assert tenant.admin.get(f"/api/agents/{ringer.id}")["state"] == "available"
    finally:
        results = [p.wait(45) for p in phones]
    assert "INVITE" in results[0].messages and "CANCEL" in results[0].messages, results[0].errors
    assert "ACK" in results[1].messages, results[1].errors


def test_a_round_robin_queue_offers_the_agent_after_the_last_one_offered_not_the_longest_idle(
        tenant, contact_queue, sipp, real_switch):
    queue, agents = contact_queue
    tenant.admin.patch(f"/api/queues/{queue['id']}", {"strategy": "round_robin"})
    ordered = sorted(agents, key=lambda a: a.id)
    presence = sip_agents.presence()
    # the pointer says the first agent (by id) was offered last: the second one is next,
    # though the first has been idle longest
    presence.redis.set(presence.pointer_key(str(tenant.account_id), queue["name"]), ordered[0].id, ex=60)
    phones = [sip_agents.register(sipp, real_switch, a, "agent-answer-ooc.xml", seconds=20) for a in ordered]
    try:
        for agent in ordered:
            sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        result = sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "3000"))
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(number)[0]
        assert str(record["agent_id"]) == ordered[1].id
    finally:
        for phone in phones:
            phone.wait(40)
