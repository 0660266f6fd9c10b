"""A blind transfer asked from the REST API (``POST /api/calls/:callId/actions``, action
``transfer``) on the real switch: a sipp caller in a queue, answered by a sipp agent (who sends
no audio), is transferred by the tenant's admin to a phone number (least-cost routing to a sipp
carrier) or to a listed ``sip:`` target (a sipp PBX on 127.0.0.1); both callees answer and
speak (carrier-talk.xml.tmpl: 7 s of speech).

What only the real switch can say: that the caller is put through to the target after the
agent's leg is killed — measured on what the caller receives (hold_audio.CallerEar: the RTP
sent to the caller's port): silence while with the silent agent, then the target's speech —
and that the records, events and the agent's channel say so."""
from __future__ import annotations

import json
import time
import uuid

from sqlalchemy import text

from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch import outbound
from tests.realswitch.hold_audio import CallerEar
from tests.realswitch.provision import poll
from tests.realswitch.test_agent_channel_realswitch import _callstate, _channel

TALK_SECONDS = 4.0        # the caller and the target talk this long, then the API hangs the call up
WITH_AGENT_SECONDS = 1.5  # the caller with the (silent) agent before the transfer
# the target's speech the caller hears in those 4 s: sip-tester's speech has pauses between
# words; measured 3.50-3.57 s (10 ms frames above hold_audio.SILENCE_RMS), so 3.5 s ± 0.5 s
MIN_SPEECH_SECONDS, MAX_SPEECH_SECONDS = 3.0, 4.0


def _admin_user_id(tenant) -> str:
    with tenant.owner_engine.connect() as conn:
        return str(conn.execute(text("SELECT id FROM users WHERE account_id = :a AND username = 'admin'"),
                                {"a": tenant.account_id}).scalar_one())


def _channels(real_switch) -> list[dict]:
    return json.loads(real_switch.api("show channels as json") or "{}").get("rows") or []


def _transfer_and_listen(product, tenant, sipp, real_switch, target: dict) -> dict:
    """The caller with an agent, transferred to ``target`` from the API; the figures and ids."""
    queue = tenant.admin.post("/api/queues", {"name": f"atx-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 15,
                                              "wrap_up_seconds": 1, "announce_position": False})
    agent = sip_agents.new_agent(tenant, [queue["id"]], prefix="atx")
    assert poll(lambda: sip_agents.in_directory(real_switch, agent), 15), "directory not applied"
    phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-ooc.xml", seconds=40)
    client = _channel(product, tenant, agent)
    try:
        sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        with CallerEar() as ear:
            caller = sipp.start_calls(number, scenario="uac-wait-bye-listen.xml",
                                      extra=("-key", "rtp_port", str(ear.port)))
            call_id = client.expect("offer", timeout=20)["offerId"]
            client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
            leg = eventually(lambda: sip_agents.presence().agent_leg(str(tenant.account_id), agent.id),
                             timeout=10, what="the agent's leg")[1]
            bridged_at = time.monotonic()
            time.sleep(WITH_AGENT_SECONDS)  # scenario: the caller is with the agent a moment

            asked_at = time.monotonic()
            reply = tenant.admin.post(f"/api/calls/{call_id}/actions", {"action": "transfer", "target": target})
            eventually(lambda: _callstate(real_switch, leg) is None, timeout=10, what="the agent's leg gone")
            moved = client.expect("call", lambda m: m["phase"] == "transferred", timeout=20)
            eventually(lambda: any(r["uuid"] not in (call_id, leg) and r.get("callstate") == "ACTIVE"
                                   for r in _channels(real_switch)), timeout=15, what="the target answered")
            answered_at = time.monotonic()
            time.sleep(TALK_SECONDS)  # scenario: the caller talks with the target
            tenant.admin.post(f"/api/calls/{call_id}/actions", {"action": "hangup", "reason": "test_done"})
            hung_up_at = time.monotonic()
            result = caller.wait(30)
        assert result.ok, result.errors or result.stdout[-1500:]
        return {"call_id": call_id, "agent": agent, "number": number, "reply": reply, "moved": moved,
                "with_agent": ear.loud_seconds(bridged_at, asked_at),
                "with_target": ear.loud_seconds(answered_at, hung_up_at)}
    finally:
        client.close()
        phone.wait(60)


def _assert_records(tenant, heard: dict, target: dict, journey: str) -> dict:
    call_id, agent = heard["call_id"], heard["agent"]
    assert heard["reply"]["action"] == "transfer" and heard["reply"]["state"]["bridged"] is True
    assert heard["moved"]["to"] == target
    # the caller heard nothing from the silent agent, then the target's speech
    assert heard["with_agent"] <= 0.1, heard
    assert MIN_SPEECH_SECONDS <= heard["with_target"] <= MAX_SPEECH_SECONDS, heard
    record = tenant.wait_record(heard["number"])[0]
    assert str(record["call_id"]) == call_id and str(record["agent_id"]) == agent.id
    assert f"transfer:{journey}" in record["journey"], record["journey"]
    assert record["hangup_reason"] == "test_done"
    by = {"userId": _admin_user_id(tenant), "apiKeyId": None, "agentId": None}
    [transferred] = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call_id]
    assert (transferred["kind"], transferred["from"], transferred["to"], transferred["by"]) == (
        "blind", {"agentId": agent.id}, target, by)
    [applied] = [e["payload"] for e in tenant.events("call.control.applied")
                 if e["payload"]["callId"] == call_id and e["payload"]["action"] == "transfer"]
    assert applied["by"] == by
    details = poll(lambda: (lambda d: d if d["segments"] and d["summary"] else None)(
        tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)
    assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(agent.id, True)]
    assert details["summary"]["transfer_count"] == 1
    return record


def test_given_a_caller_with_an_agent_when_the_api_transfers_it_to_a_number_then_lcr_reaches_the_carrier_and_the_caller_hears_it(
        product, routing_tenant, sipp, real_switch, carriers):
    tenant = routing_tenant
    callee = carriers.talking()
    carrier_id, gateway_id = outbound.carrier(tenant, "talking", callee.port)
    prefix = outbound.prefix()
    outbound.route(product, tenant, prefix, [carrier_id])
    outbound.wait_gateways(real_switch, gateway_id)
    target = {"type": "number", "number": f"+{prefix}5550123"}

    heard = _transfer_and_listen(product, tenant, sipp, real_switch, target)

    record = _assert_records(tenant, heard, target, "number")
    assert str(record["dial_carrier_id"]) == carrier_id, record


def test_given_a_caller_with_an_agent_when_the_api_transfers_it_to_a_listed_sip_target_then_the_caller_hears_it(
        product, routing_tenant, sipp, real_switch, carriers):
    tenant = routing_tenant
    if not any(t["host"] == "127.0.0.1" for t in tenant.admin.get("/api/sip-targets")):
        tenant.admin.post("/api/sip-targets", {"host": "127.0.0.1"})
    pbx = carriers.talking()
    target = {"type": "sip", "uri": f"sip:callee@127.0.0.1:{pbx.port}"}

    heard = _transfer_and_listen(product, tenant, sipp, real_switch, target)

    _assert_records(tenant, heard, target, "sip")

