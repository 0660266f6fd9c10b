"""An agent's attended transfer end to end in one process (as tests/session/test_agent_transfer.py):
the agent consults another agent while its caller holds, then completes, cancels, or the
consulted agent hangs up. The simulator models the legs moved around the caller
(tests/simulator/consult.py); the caller's leg stays with the session throughout: it holds
with the queue's music, then meets the target or its agent in a two-party conference."""
from __future__ import annotations

import json
import time
import uuid

import pytest
from sqlalchemy import text

from app.api.calls import live
from app.contact.distribution import ContactCentre
from app.contact.presence import Presence
from app.contact.queue_stats import QueueStats
from app.errors import Conflict
from app.routing.cache import RoutingCache
from app.routing.dialer import LcrDialer
from app.settings import get_settings
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record
from tests.session.desk import agent_desk, outbox_payloads, rows
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan
from tests.simulator import Call
from tests.simulator.scenario import RingingPhone

PEER_ADDRESS = "10.0.0.2:5070"  # a cluster peer's agent profile (tests/verbs/test_queue_cross_node.py)


def _ask(redis_client, account, call_id: str, agent_id: str, action: str, params: dict | None = None) -> dict:
    return live.send(redis_client, get_settings().redis_key_prefix, str(account.id), call_id, action,
                     {**(params or {}), "agentId": agent_id}, by={"agentId": agent_id})


def _handle_samples(redis_client, account, call_id: str) -> list[tuple[str, int]]:
    """The queue's handle-time samples of this call: (agent leg, ms), oldest first."""
    stats = QueueStats(redis_client, get_settings().redis_key_prefix)
    members = redis_client.zrange(stats.handle_key(str(account.id), "support"), 0, -1)
    out = []
    for member in (m.decode() for m in members):
        call, leg, ms = member.split(":")
        if call == call_id:
            out.append((leg, int(ms)))
    return out


def _answered_by_ana(controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
                     ben_node: str | None = None, ben_talk: float = 3600.0, scenario=None,
                     status_hook_url: str | None = None):
    """A caller of the ``support`` queue answered by ana (bridged); ben's phone is the one a
    consultation rings, talking ``ben_talk`` seconds with the caller once they meet.
    ``ben_node``: the switch (Core-UUID) ben's phone registered on, when not the caller's.
    ``scenario``: the caller's scenario to start from (its callee is set here).
    ``status_hook_url``: the application's status hook."""
    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support", "priority": 3}],
                                         call_status_hook_url=status_hook_url)
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id)
    if ben_node is not None:
        presence.registered(_subdomain(owner_conn, account), _sip_username(owner_conn, agents["ben"]), 60,
                            node=ben_node)
    services.contact = ContactCentre(presence)
    ana_phone, ben_phone = RingingPhone(), RingingPhone(talk=ben_talk)
    scenario = scenario or Call()
    scenario.callee = number
    call = simulate_call(scenario.bridge_rings(ana_phone).consult_rings(ben_phone), controller)
    assert ana_phone.ringing.wait(10), "ana was not offered the call"
    ana_phone.answer()

    def with_ana():
        live = services.live_sessions.get(call.uuid)
        return live is not None and live.other_leg and live.ctx.agent_id == agents["ana"]
    eventually(with_ana, timeout=10, what="the caller bridged to ana, the session's agent")
    return account, agents, presence, call, ana_phone, ben_phone


def _consulting(*fixtures, **options):
    """A caller answered by ana, who consults ben; ben answers. Returns what the tests need
    (the arguments as ``_answered_by_ana``'s)."""
    account, agents, _presence, call, ana_phone, ben_phone = _answered_by_ana(*fixtures, **options)
    ana_leg = _consult_ben(fixtures[5], fixtures[6], account, agents, call, ben_phone, answer=True)
    return account, agents, call, ana_phone, ben_phone, ana_leg


def _consult_ringing(*fixtures, **options):
    """A caller answered by ana, who consults ben; ben's phone rings (not answered)."""
    account, agents, _presence, call, ana_phone, ben_phone = _answered_by_ana(*fixtures, **options)
    ana_leg = _consult_ben(fixtures[5], fixtures[6], account, agents, call, ben_phone, answer=False)
    return account, agents, call, ana_phone, ben_phone, ana_leg


def _consult_ben(services, redis_client, account, agents, call, ben_phone, answer: bool) -> str:
    """Ana, bridged to the caller, consults ben: his phone rings (and he answers, with
    ``answer``), the caller holds with the queue's music. Returns ana's leg."""
    ana_leg = services.live_sessions[call.uuid].other_leg

    reply = _ask(redis_client, account, call.uuid, agents["ana"], "consult",
                 {"target": {"type": "agent", "agentId": agents["ben"]}})

    assert ben_phone.ringing.wait(10), "ben was not rung for the consultation"
    [originate] = [c for c in call.controls if c.startswith("originate")]
    assert f"&intercept({ana_leg})" in originate and f"api_hangup_hook='uuid_break {call.uuid}'" in originate
    # the caller's bridge to ana returned: the session plays it the queue's music again
    eventually(lambda: call.executed()[-1][0] == "playback" and call.executed()[-1][1].startswith("local_stream://"),
               timeout=10, what="the caller's hold music")
    assert services.live_sessions[call.uuid].other_leg is None, call.controls
    assert reply["answered"] is True
    if answer:
        ben_phone.answer()
        eventually(lambda: ben_phone.b_leg_uuid in call.legs and call.legs[ben_phone.b_leg_uuid].answered,
                   timeout=10, what="ben answered")
    return ana_leg


def _subdomain(owner_conn, account) -> str:
    return owner_conn.execute(text("SELECT subdomain FROM accounts WHERE id = :a"), {"a": account.id}).scalar_one()


def _sip_username(owner_conn, agent_id: str) -> str:
    return owner_conn.execute(text("SELECT sip_username FROM agents WHERE id = :a"), {"a": agent_id}).scalar_one()


def test_given_an_agent_consulting_another_agent_when_it_completes_then_the_caller_is_with_the_target_and_records_and_status_hook_show_both(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control, hook_server):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        ben_talk=1.5,  # ben talks 1.5 s with the caller, then hangs up
        status_hook_url=hook_server.url("/status"))
    completing = time.monotonic()

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")

    eventually(lambda: call.rejoined == [ben_phone.b_leg_uuid], timeout=10, what="the caller bridged to ben")
    assert ana_leg in call.killed_legs  # ana's phone got its BYE
    presence = services.contact.presence
    # ben has the caller as after a queue offer's answer: engaged by the call, its consulted leg
    # as its leg (the agent channel's hangup/hold act on it), agent.accept (its `call` connected)
    assert presence.engaged_by(str(account.id), agents["ben"]) == call.uuid
    assert presence.agent_leg(str(account.id), agents["ben"]) == (call.uuid, ben_phone.b_leg_uuid)
    [offer] = outbox_payloads(owner_conn, call.uuid, "agent.consult.offer")
    assert (offer["agentId"], offer["fromAgentId"], offer["legId"]) == (agents["ben"], agents["ana"], ben_phone.b_leg_uuid)
    [ana_offer] = outbox_payloads(owner_conn, call.uuid, "agent.offer")  # the caller's number, as ana's offer
    assert offer["from"] and offer["from"] == ana_offer["from"] and offer["timeoutSeconds"] == 30
    accepts = outbox_payloads(owner_conn, call.uuid, "agent.accept")
    assert [(a["agentId"], a.get("kind")) for a in accepts] == [(agents["ana"], None), (agents["ben"], "consult")]
    assert outbox_payloads(owner_conn, call.uuid, "agent.consult.withdrawn") == []
    assert call.wait(15), "the call did not end"

    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    recorded = time.monotonic()
    assert record["agent_id"] == uuid.UUID(agents["ben"])
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert event["kind"] == "attended" and event["to"] == {"type": "agent", "agentId": agents["ben"]}
    assert event["from"] == {"agentId": agents["ana"]} and event["by"] == {"agentId": agents["ana"], "userId": None, "apiKeyId": None}
    segments = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c ORDER BY started_at",
                     c=call.uuid)
    assert [(str(s["agent_id"]), s["transferred"]) for s in segments] == [(agents["ana"], True),
                                                                         (agents["ben"], False)]
    # ben's window: from the completion, his 1.5 s with the caller and no more than it took to end
    assert 1500 <= segments[1]["talk_ms"] <= (recorded - completing) * 1000, segments[1]["talk_ms"]
    assert segments[0]["ended_at"] <= segments[1]["started_at"]
    [summary] = rows(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["transfer_count"] == 1
    assert presence.engaged_by(str(account.id), agents["ben"]) is None  # released with the call
    # the status hook: answered, the transfer (as for a blind one, kind attended), the end
    eventually(lambda: len(hook_server.requests) >= 3, what="three status hook requests")
    bodies = [json.loads(r.body) for r in hook_server.requests]
    assert [b["callStatus"] for b in bodies] == ["in-progress", "in-progress", "completed"]
    assert "transfer" not in bodies[0]
    assert (bodies[1]["transfer"]["kind"], bodies[1]["transfer"]["from"], bodies[1]["transfer"]["to"]) == (
        "attended", {"agentId": agents["ana"]}, {"type": "agent", "agentId": agents["ben"]})


def test_given_a_completed_attended_transfer_when_the_caller_hangs_up_then_one_handle_time_per_agent_leg(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    arranging = time.monotonic()
    account, agents, _presence, call, _ana_phone, ben_phone = _answered_by_ana(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        scenario=Call().hangup_in_room(1.0))  # the caller talks 1 s with ben, then hangs up
    bridged = time.monotonic()  # ana has the caller (her leg's sample runs from before now)
    ana_leg = _consult_ben(services, redis_client, account, agents, call, ben_phone, answer=True)
    ben_leg = ben_phone.b_leg_uuid
    completing = time.monotonic()

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")

    eventually(lambda: call.rejoined == [ben_leg], timeout=10, what="the caller with ben")
    eventually(lambda: [leg for leg, _ms in _handle_samples(redis_client, account, call.uuid)] == [ana_leg],
               timeout=10, what="ana's handle time at the completion")
    completed = time.monotonic()
    assert call.wait(15), "the call did not end"
    eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    samples = _handle_samples(redis_client, account, call.uuid)
    sampled = time.monotonic()
    # before: ana's sample twice (the completion, then the caller's hang-up) and none for ben
    assert [leg for leg, _ms in samples] == [ana_leg, ben_leg], samples
    ana_ms, ben_ms = samples[0][1], samples[1][1]
    # ana's: her leg from her answer to the completion (the consultation in it)
    assert int((completing - bridged) * 1000) <= ana_ms <= (completed - arranging) * 1000, samples
    # ben's: from the completion, the caller's second with him, and no more than it took to end
    assert 1000 <= ben_ms <= (sampled - completing) * 1000, samples


def test_given_an_agent_consulting_another_agent_when_it_cancels_then_the_consulted_leg_ends_and_the_agent_has_the_caller_again(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    presence = services.contact.presence
    assert presence.engaged_by(str(account.id), agents["ben"]) == ben_phone.b_leg_uuid  # claimed before rung
    assert agents["ben"] not in presence.idle_agents(str(account.id))

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_cancel")

    assert ben_phone.b_leg_uuid in call.killed_legs
    eventually(lambda: agents["ben"] in presence.idle_agents(str(account.id)), timeout=10,
               what="ben idle again after the cancel")
    assert presence.engaged_by(str(account.id), agents["ben"]) is None
    eventually(lambda: call.rejoined == [ana_leg], timeout=10, what="the caller back with ana")
    [withdrawn] = outbox_payloads(owner_conn, call.uuid, "agent.consult.withdrawn")  # ben's offer
    assert (withdrawn["agentId"], withdrawn["reason"]) == (agents["ben"], "cancelled")
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ana"])
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []
    segments = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c", c=call.uuid)
    assert [(str(s["agent_id"]), s["transferred"]) for s in segments] == [(agents["ana"], False)]


def test_given_an_answered_consultation_still_intercepting_the_agent_when_the_agent_cancels_then_it_has_the_caller_again(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    """The cancel lands right after ben answered, while his leg's ``intercept`` is still
    bridging ana's parked leg (0.5 s here). Killing his leg then would take ana's with it (the
    real switch hung it up, DESTINATION_OUT_OF_ORDER): the kill waits for the bridge."""
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        scenario=Call().intercept_takes(0.5))

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_cancel")

    eventually(lambda: call.rejoined == [ana_leg], timeout=10, what="the caller back with ana")
    assert ana_leg not in call.legs or not call.legs[ana_leg].ended.is_set(), "ana's leg was hung up"
    assert not call.alone_in_room.is_set()
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"


def test_given_a_cancel_when_the_agents_leg_is_gone_too_then_the_caller_is_not_left_alone_in_a_room_and_the_call_ends(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    """Seen on the real switch (tests/realswitch/test_cross_node_consult.py): a cancel landing
    while the consulted leg's ``intercept`` was bridging the agent's parked leg; FreeSWITCH hung
    the agent's leg up with the consulted one (DESTINATION_OUT_OF_ORDER). The caller must not
    wait for it in an ``endconf`` room it never joins (alone, silent, until it hangs up)."""
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    ana_phone.hangup()  # ana's leg ends as ben's is killed

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_cancel")

    assert call.wait(15), "the call did not end: the caller waits for ana's leg in a room"
    assert not call.alone_in_room.is_set(), call.controls
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ana"])
    [withdrawn] = outbox_payloads(owner_conn, call.uuid, "agent.consult.withdrawn")
    assert (withdrawn["agentId"], withdrawn["reason"]) == (agents["ben"], "cancelled")


def test_given_a_completion_when_the_consulted_leg_never_reaches_the_callers_room_then_the_caller_is_taken_out_and_the_call_ends(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    """The switch accepts the move of ben's leg into the caller's room, but the leg never gets
    there (died on its way in, or the move was lost): the caller, alone in an ``endconf`` room,
    is taken out after CONSULT_ROOM_JOIN_SECONDS instead of waiting for ever."""
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        scenario=Call().loses_room_move())

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")

    eventually(lambda: call.alone_in_room.is_set(), timeout=10, what="the caller alone in the room")
    assert call.wait(15), "the call did not end: the caller waits alone in its room"
    assert call.kicked.is_set()
    assert ben_phone.b_leg_uuid in call.killed_legs  # the leg it waited for is hung up
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ben"])


def test_given_an_agent_consulting_another_agent_when_the_consulted_agent_hangs_up_then_the_agent_has_the_caller_again(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)

    ben_phone.hangup()

    eventually(lambda: call.rejoined == [ana_leg], timeout=10, what="the caller back with ana")
    [withdrawn] = outbox_payloads(owner_conn, call.uuid, "agent.consult.withdrawn")
    assert (withdrawn["agentId"], withdrawn["reason"]) == (agents["ben"], "missed")
    with pytest.raises(Conflict) as refused:  # nothing left to complete
        _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")
    assert refused.value.code == "not_consulting"
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []


def test_given_a_ringing_consultation_when_the_consulted_agent_rejects_then_the_agent_is_told_and_has_the_caller_and_the_target_is_free(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consult_ringing(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    ben_leg = ben_phone.b_leg_uuid
    presence = services.contact.presence
    with pytest.raises(Conflict) as refused:  # only the consulted agent may reject it
        _ask(redis_client, account, call.uuid, agents["ana"], "consult_reject")
    assert refused.value.code == "no_offer"
    assert presence.consulted_leg(str(account.id), agents["ben"]) == ben_leg  # what its channel checks

    _ask(redis_client, account, call.uuid, agents["ben"], "consult_reject", {"legId": ben_leg})

    assert ben_leg in call.killed_legs and call.kill_causes[ben_leg] == "CALL_REJECTED"
    eventually(lambda: call.rejoined == [ana_leg], timeout=10, what="the caller back with ana")
    [withdrawn] = outbox_payloads(owner_conn, call.uuid, "agent.consult.withdrawn")  # ben's offer
    assert (withdrawn["agentId"], withdrawn["reason"]) == (agents["ben"], "rejected")
    [failed] = outbox_payloads(owner_conn, call.uuid, "agent.consult.failed")  # ana's channel
    assert (failed["agentId"], failed["reason"], failed["to"], failed["legId"]) == (
        agents["ana"], "rejected", {"type": "agent", "agentId": agents["ben"]}, ben_leg)
    eventually(lambda: agents["ben"] in presence.idle_agents(str(account.id)), timeout=10,
               what="ben available again after his reject")
    assert presence.engaged_by(str(account.id), agents["ben"]) is None
    assert presence.consulted_leg(str(account.id), agents["ben"]) is None
    with pytest.raises(Conflict) as again:  # nothing left to reject
        _ask(redis_client, account, call.uuid, agents["ben"], "consult_reject")
    assert again.value.code == "no_offer"
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ana"])
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []


def test_given_an_answered_consultation_when_the_consulted_agent_rejects_then_no_offer_and_the_consultation_goes_on(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)

    with pytest.raises(Conflict) as refused:
        _ask(redis_client, account, call.uuid, agents["ben"], "consult_reject")

    assert refused.value.code == "no_offer"
    assert ben_phone.b_leg_uuid not in call.killed_legs
    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")
    eventually(lambda: call.rejoined == [ben_phone.b_leg_uuid], timeout=10, what="the caller with ben")
    ben_phone.hangup()
    assert call.wait(15), "the call did not end"


def test_given_a_cancelled_consultation_when_the_agent_consults_again_and_completes_then_the_caller_is_with_the_second_target(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    _ask(redis_client, account, call.uuid, agents["ana"], "consult_cancel")
    eventually(lambda: call.rejoined == [ana_leg], timeout=10, what="the caller back with ana")
    ben_again = RingingPhone()
    call.consult_phones.append(ben_again)

    reply = _ask(redis_client, account, call.uuid, agents["ana"], "consult",
                 {"target": {"type": "agent", "agentId": agents["ben"]}})

    assert reply["answered"] is True
    assert ben_again.ringing.wait(10), "ben was not rung for the second consultation"
    second = [c for c in call.controls if c.startswith("originate")][-1]
    assert f"&intercept({ana_leg})" in second  # ana's leg, taken out of the caller's room, lives on
    assert ana_leg not in call.killed_legs
    eventually(lambda: call.executed()[-1][0] == "playback", timeout=10, what="the caller's hold music again")
    ben_again.answer()
    eventually(lambda: ben_again.b_leg_uuid in call.legs and call.legs[ben_again.b_leg_uuid].answered,
               timeout=10, what="ben answered the second consultation")
    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")
    eventually(lambda: call.rejoined == [ana_leg, ben_again.b_leg_uuid], timeout=10, what="the caller with ben")
    assert ana_leg in call.killed_legs
    ben_again.hangup()
    assert call.wait(15), "the call did not end"
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ben"])
    assert len(outbox_payloads(owner_conn, call.uuid, "call.transferred")) == 1
    segments = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c ORDER BY started_at",
                     c=call.uuid)
    assert [(str(s["agent_id"]), s["transferred"]) for s in segments] == [(agents["ana"], True),
                                                                         (agents["ben"], False)]


def test_given_a_target_agent_on_another_call_when_the_agent_consults_it_then_it_is_refused_busy_and_the_caller_keeps_its_agent(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, presence, call, ana_phone, ben_phone = _answered_by_ana(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    other_call = str(uuid.uuid4())
    assert presence.claim_agent(str(account.id), agents["ben"], other_call, None, 60) is not None  # ben busy

    with pytest.raises(Conflict) as refused:
        _ask(redis_client, account, call.uuid, agents["ana"], "consult",
             {"target": {"type": "agent", "agentId": agents["ben"]}})

    assert refused.value.code == "consult_target_busy"
    assert not ben_phone.ringing.is_set() and not [c for c in call.controls if c.startswith("originate")]
    assert services.live_sessions[call.uuid].other_leg is not None  # still bridged to ana
    assert presence.engaged_by(str(account.id), agents["ben"]) == other_call  # the other call's claim kept
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"


@pytest.fixture
def peer(redis_client):
    """A cluster peer known to the controllers (its Core-UUID → agent-profile address)."""
    presence = Presence(redis_client, get_settings().redis_key_prefix)
    core_uuid = f"peer-{uuid.uuid4()}"
    presence.node_seen(core_uuid, PEER_ADDRESS)
    yield core_uuid
    redis_client.hdel(presence.nodes_key(), core_uuid)


def test_given_the_consulted_agent_registered_on_another_node_when_the_agent_consults_and_completes_then_it_is_rung_through_that_node_and_has_the_caller(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control, peer):
    """As a cross-node queue offer (docs/agents.md "Several FreeSWITCH nodes"): the caller's
    switch originates the consulted leg to the peer's agent profile, the agent's domain in a
    header; the rest of the consultation is the caller's switch's as for a local agent."""
    account, agents, call, _ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        ben_node=peer)
    [originate] = [c for c in call.controls if c.startswith("originate")]
    ben_user = _sip_username(owner_conn, agents["ben"])
    assert (f"[sip_h_X-SBC-Agent-Domain={_subdomain(owner_conn, account)}]sofia/internal/{ben_user}@{PEER_ADDRESS}"
            f" &intercept({ana_leg})") in originate, originate

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")

    eventually(lambda: call.rejoined == [ben_phone.b_leg_uuid], timeout=10, what="the caller with ben")
    presence = services.contact.presence
    assert presence.agent_leg(str(account.id), agents["ben"]) == (call.uuid, ben_phone.b_leg_uuid)
    ben_phone.hangup()
    assert call.wait(15), "the call did not end"
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ben"])
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert (event["kind"], event["to"]) == ("attended", {"type": "agent", "agentId": agents["ben"]})


def test_given_the_consulted_agent_registered_on_a_node_nobody_knows_when_the_agent_consults_it_then_it_is_refused_unavailable(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    """Its phone could not be rung from the caller's switch (a queue never offers it either):
    refused before it is claimed or anything is touched."""
    account, agents, presence, call, ana_phone, ben_phone = _answered_by_ana(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        ben_node=f"unknown-{uuid.uuid4()}")

    with pytest.raises(Conflict) as refused:
        _ask(redis_client, account, call.uuid, agents["ana"], "consult",
             {"target": {"type": "agent", "agentId": agents["ben"]}})

    assert refused.value.code == "consult_target_unavailable"
    assert not ben_phone.ringing.is_set() and not [c for c in call.controls if c.startswith("originate")]
    assert presence.engaged_by(str(account.id), agents["ben"]) is None  # not claimed
    assert services.live_sessions[call.uuid].other_leg is not None  # still bridged to ana
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"


@pytest.mark.parametrize(("target", "code"), [
    ({"type": "number", "number": "+15557770000", "callerId": "+15550009999"}, "caller_id_not_owned"),
    ({"type": "number", "number": "+15557770000"}, "transfer_target_not_found"),  # no route
    ({"type": "sip", "uri": "sip:pbx@203.0.113.9"}, "transfer_target_not_found"),  # not listed
])
def test_given_a_number_or_sip_target_the_account_may_not_reach_when_the_agent_consults_it_then_it_is_refused_and_nothing_rings(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control, target, code):
    """The blind transfer's rules (a callerId of the account's, a route, a listed host),
    refused before anything is touched: the agent keeps its caller."""
    account, agents, _presence, call, ana_phone, _ben_phone = _answered_by_ana(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)

    with pytest.raises(Conflict) as refused:
        _ask(redis_client, account, call.uuid, agents["ana"], "consult", {"target": target})

    assert refused.value.code == code
    assert not [c for c in call.controls if c.startswith("originate") or c.startswith("uuid_transfer")]
    assert services.live_sessions[call.uuid].other_leg is not None  # still bridged to ana
    ana_phone.hangup()
    assert call.wait(15), "the call did not end"


def _consulting_a_number(controller, simulate_call, number_with_app, owner_engine, owner_conn, services,
                         redis_client):
    """Ana, bridged to a caller of the ``support`` queue, consults a number through the
    account's least-cost plan (two carriers) and it answers. Returns (account, agents, call,
    the number's phone, ana's leg, the cheap carrier's id, its gateway's id)."""
    services.routing = RoutingCache()
    services.dialer = LcrDialer(services.routing)
    account, number, _ = number_with_app(app_json=[{"verb": "queue", "name": "support"}])
    cheap, cheap_gw, _ = two_carrier_plan(account.id)
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, account.id)
    services.contact = ContactCentre(presence)
    ana_phone, far_phone = RingingPhone(), RingingPhone()
    call = simulate_call(Call(callee=number).bridge_rings(ana_phone).consult_rings(far_phone), controller)
    assert ana_phone.ringing.wait(10), "ana was not offered the call"
    ana_phone.answer()
    eventually(lambda: services.live_sessions.get(call.uuid) and services.live_sessions[call.uuid].other_leg,
               timeout=10, what="the caller bridged to ana")
    ana_leg = services.live_sessions[call.uuid].other_leg
    _ask(redis_client, account, call.uuid, agents["ana"], "consult",
         {"target": {"type": "number", "number": "+" + GERMAN_NUMBER}})
    assert far_phone.ringing.wait(10), "the number was not rung"
    [originate] = [c for c in call.controls if c.startswith("originate")]
    assert f"lcr_carrier_id={cheap}" in originate  # through the account's least-cost route
    far_phone.answer()
    eventually(lambda: far_phone.b_leg_uuid in call.legs and call.legs[far_phone.b_leg_uuid].answered,
               timeout=10, what="the number answered")
    return account, agents, call, far_phone, ana_leg, cheap, cheap_gw


def _carrier_on_the_record(owner_conn, call, cheap, cheap_gw) -> None:
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert (record["dial_carrier_id"], record["dial_gateway_id"]) == (cheap, cheap_gw)
    [ended] = outbox_payloads(owner_conn, call.uuid, "call.ended")
    assert (ended["dialCarrierId"], ended["dialGatewayId"]) == (str(cheap), str(cheap_gw))


def test_given_an_agent_consulting_a_phone_number_when_it_completes_then_the_record_names_the_carrier_that_answered(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    """As a ``dial`` verb's routed leg: the caller now talks through that carrier, so its record
    and ``call.ended`` carry ``dial_carrier_id``/``dial_gateway_id`` (docs/agents.md)."""
    account, agents, call, far_phone, _, cheap, cheap_gw = _consulting_a_number(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")

    eventually(lambda: call.rejoined == [far_phone.b_leg_uuid], timeout=10, what="the caller with the number")
    far_phone.hangup()
    assert call.wait(15), "the call did not end"
    _carrier_on_the_record(owner_conn, call, cheap, cheap_gw)
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert event["kind"] == "attended" and event["to"] == {"type": "number", "number": "+" + GERMAN_NUMBER}


def test_given_an_agent_in_a_three_way_call_with_a_phone_number_when_it_leaves_then_the_record_names_the_carrier_that_answered(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    """As a completed consultation of a number: once the agent leaves, the caller talks through
    that carrier, so its record and ``call.ended`` carry ``dial_carrier_id``/``dial_gateway_id``."""
    account, agents, call, far_phone, ana_leg, cheap, cheap_gw = _consulting_a_number(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    _ask(redis_client, account, call.uuid, agents["ana"], "conference")
    eventually(lambda: call.rejoined == ["3way"], timeout=10, what="the caller in the three-way room")

    _ask(redis_client, account, call.uuid, agents["ana"], "conference_leave")

    assert ana_leg in call.killed_legs and far_phone.b_leg_uuid not in call.killed_legs
    far_phone.hangup()
    assert call.wait(15), "the call did not end"
    _carrier_on_the_record(owner_conn, call, cheap, cheap_gw)
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []  # a three-way call is no transfer


def test_given_an_answered_consultation_when_the_agent_swaps_twice_then_it_talks_with_the_caller_then_the_target_and_can_complete(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    ben_leg = ben_phone.b_leg_uuid

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_swap")

    # ana in a room the caller's session joins; ben parked, then on the queue's music
    eventually(lambda: call.rejoined == [ana_leg], timeout=10, what="the caller with ana (swap)")
    assert any(c.startswith(f"uuid_transfer {ben_leg} 'endless_playback:") for c in call.controls), call.controls
    assert call.legs[ben_leg].partner is None and ben_leg not in call.killed_legs

    _ask(redis_client, account, call.uuid, agents["ana"], "consult_swap")

    assert f"uuid_bridge {ana_leg} {ben_leg}" in call.controls
    eventually(lambda: call.executed()[-1][0] == "playback", timeout=10, what="the caller on hold music again")
    assert ana_leg not in call.killed_legs and call.legs[ana_leg].partner == ben_leg
    _ask(redis_client, account, call.uuid, agents["ana"], "consult_complete")
    eventually(lambda: call.rejoined == [ana_leg, ben_leg], timeout=10, what="the caller with ben")
    assert ana_leg in call.killed_legs
    ben_phone.hangup()
    assert call.wait(15), "the call did not end"
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ben"])
    assert len(outbox_payloads(owner_conn, call.uuid, "call.transferred")) == 1


def test_given_an_answered_consultation_when_the_agent_conferences_then_leaves_then_the_caller_and_target_stay_and_records_say_conferenced(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        ben_talk=2.5)  # ben talks 2.5 s with the caller from his joining, then hangs up
    ben_leg = ben_phone.b_leg_uuid
    presence = services.contact.presence
    conferencing = time.monotonic()

    _ask(redis_client, account, call.uuid, agents["ana"], "conference")

    eventually(lambda: call.rejoined == ["3way"], timeout=10, what="the caller in the three-way room")
    [room] = call.three_way
    assert call.three_way[room] == {ana_leg, ben_leg} and "+flags{mintwo}" in room
    # ben is part of the call from his joining: his window is open beside ana's
    live = eventually(lambda: (lambda r: len(r) == 2 and r)(rows(
        owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c ORDER BY started_at", c=call.uuid)),
        timeout=10, what="ben's window opened on joining")
    assert [(str(s["agent_id"]), s["conferenced"], s["ended_at"]) for s in live] == [
        (agents["ana"], True, None), (agents["ben"], True, None)]
    # the three talk 1 s: ana's own time in the room, which she ends by an action of hers (no
    # party of the simulated call acts then, and no state of the call changes to wait for)
    time.sleep(1.0)
    leaving = time.monotonic()
    _ask(redis_client, account, call.uuid, agents["ana"], "conference_leave")
    left_at = time.monotonic()

    assert ana_leg in call.killed_legs and ben_leg not in call.killed_legs
    eventually(lambda: presence.engaged_by(str(account.id), agents["ana"]) is None, timeout=10,
               what="ana released at once")
    assert not call.wait(0), "the caller was hung up when the agent left"
    assert call.wait(15), "the call did not end"  # ben hung up, 2.5 s after his joining

    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    recorded = time.monotonic()
    assert record["agent_id"] == uuid.UUID(agents["ben"])
    [added] = outbox_payloads(owner_conn, call.uuid, "call.conferenced")
    assert added["agentId"] == agents["ana"] and added["to"] == {"type": "agent", "agentId": agents["ben"]}
    [left] = outbox_payloads(owner_conn, call.uuid, "call.conference.left")
    assert left["agentId"] == agents["ana"] and left["by"]["agentId"] == agents["ana"]
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []
    segments = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c ORDER BY started_at",
                     c=call.uuid)
    assert [(str(s["agent_id"]), s["transferred"], s["conferenced"]) for s in segments] == [
        (agents["ana"], False, True), (agents["ben"], False, True)]
    assert segments[0]["started_at"] < segments[1]["started_at"] < segments[0]["ended_at"]  # joined, then ana left
    overlap_ms = (segments[0]["ended_at"] - segments[1]["started_at"]).total_seconds() * 1000
    assert 1000 <= overlap_ms <= (left_at - conferencing) * 1000, overlap_ms  # the three-way second
    # ben's window: from his joining, his 2.5 s with the caller, no more than it took to end
    assert 2500 <= segments[1]["talk_ms"] <= (recorded - conferencing) * 1000, segments[1]["talk_ms"]
    assert "conference:agent" in record["journey"]
    [summary] = rows(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["transfer_count"] == 0
    # the call's talk: ana's window and ben's, the three-way second counted once
    assert abs(summary["talk_ms"] - (segments[0]["talk_ms"] + segments[1]["talk_ms"] - overlap_ms)) <= 300
    # the queue's handle times: ana's leg until she left, ben's from then, each once
    samples = _handle_samples(redis_client, account, call.uuid)
    assert [leg for leg, _ms in samples] == [ana_leg, ben_leg], samples
    # ben's: from ana's leaving to his hang-up (2.5 s after his joining, which followed `conference`)
    assert (conferencing + 2.5 - left_at) * 1000 <= samples[1][1] <= (recorded - leaving) * 1000, samples


def test_given_a_three_way_call_when_the_agent_ends_all_then_every_leg_is_hung_up(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control):
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    _ask(redis_client, account, call.uuid, agents["ana"], "conference")
    eventually(lambda: call.rejoined == ["3way"], timeout=10, what="the caller in the three-way room")

    _ask(redis_client, account, call.uuid, agents["ana"], "conference_end")

    assert call.wait(15), "the caller was not hung up"
    assert {ana_leg, ben_phone.b_leg_uuid} <= set(call.killed_legs)
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["hangup_reason"] == "three_way_ended" and record["agent_id"] == uuid.UUID(agents["ana"])
    segments = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c ORDER BY started_at",
                    c=call.uuid)
    # ben was part of the call from his joining: his window, closed with the room
    assert [(str(s["agent_id"]), s["conferenced"]) for s in segments] == [(agents["ana"], True), (agents["ben"], True)]
    assert all(s["ended_at"] is not None for s in segments)
    assert [leg for leg, _ms in _handle_samples(redis_client, account, call.uuid)] == [ana_leg]  # ben never had it
    presence = services.contact.presence
    eventually(lambda: agents["ben"] in presence.idle_agents(str(account.id)), timeout=10,
               what="ben idle again (he never had the caller alone)")


@pytest.mark.parametrize("swaps", [1, 2])
def test_given_a_swapped_consultation_when_the_consulting_agent_hangs_up_then_the_target_is_hung_up_and_the_call_ends(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client,
        live_control, swaps):
    """Swapped once, ana talks with the caller in their room while ben holds on his own music;
    swapped back, ana and ben are bridged again. Ana hanging up must leave no one on the line:
    on the real switch the caller sat alone in its room and ben on his music for ever
    (tests/realswitch/test_agent_hangs_up_mid_consult.py)."""
    account, agents, call, ana_phone, ben_phone, ana_leg = _consulting(
        controller, simulate_call, number_with_app, owner_engine, owner_conn, services, redis_client)
    ben_leg = ben_phone.b_leg_uuid
    for _ in range(swaps):
        _ask(redis_client, account, call.uuid, agents["ana"], "consult_swap")
    if swaps == 1:
        eventually(lambda: call.rejoined == [ana_leg], timeout=10, what="the caller with ana (swap)")
    else:
        # bridged to ana again, and no longer parked when that bridge ends: his leg ends with it
        eventually(lambda: call.legs[ana_leg].partner == ben_leg
                   and call.legs[ben_leg].vars.get("park_after_bridge") == "false", timeout=10, what="ana with ben again")

    ana_phone.hangup()

    assert call.wait(15), "the call did not end: someone is left on the line"
    assert ben_phone.talking.is_set(), "ben is still on the line"
    [withdrawn] = outbox_payloads(owner_conn, call.uuid, "agent.consult.withdrawn")
    assert (withdrawn["agentId"], withdrawn["reason"]) == (agents["ben"], "cancelled")
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ana"])
    assert outbox_payloads(owner_conn, call.uuid, "call.transferred") == []
