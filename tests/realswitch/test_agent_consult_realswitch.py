"""An agent's attended transfer and three-way call on the real switch: a sipp caller in a queue
answered by a sipp agent who, on the agent channel (the real ``sbc api``), consults a second
sipp agent, then completes, cancels (and consults again), swaps, adds it to a three-way call
and leaves, or the second agent hangs up (app/voice/consult_actions.py, app/voice/three_way_actions.py,
app/verbs/consult_hold.py, app/verbs/three_way.py).

What only the real switch can say: that ``uuid_transfer … inline`` of the agent's leg returns
the caller's ``bridge`` without hanging the caller up, that the originate's quoted hooks run,
that a room ending returns the caller to its session (``hangup_after_conference=false``), and
what each party is sent (``uuid_record`` of its write stream) as the legs move."""
from __future__ import annotations

import contextlib
import json
import time
import uuid
from typing import Iterator

from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch import outbound
from tests.realswitch import test_agent_channel_realswitch as channel_tests
from tests.realswitch.agent_call import AgentCall, agent_leg, caller_with_agent
from tests.realswitch.hold_audio import CallerEar
from tests.realswitch.provision import poll
from tests.realswitch.test_supervisor import _heard

channel_queue = channel_tests.channel_queue  # the same fixture: a queue with two SIP agents
_callstate = channel_tests._callstate
# the phones stay registered for the call and this long more (they are waited for at the end:
# the default 60 s made each of these tests last 60 s)
PHONE_MARGIN_SECONDS = 12
TALK_LONG_SECONDS = 21  # uac-talk-long.xml
QUIET, LOUD = 100, 200  # RMS of what a party is sent: silence 0-2, speech and music in the hundreds or more


def _consult(call: AgentCall, tenant, target: dict | None = None) -> None:
    """The first agent consults ``target``, by default the second agent (made available: a
    consulted agent is claimed)."""
    if target is None:
        sip_agents.make_available(tenant, call.second)
        target = {"type": "agent", "agentId": call.second.id}
    time.sleep(1.5)  # scenario: the first agent talks 1.5 s before consulting
    ack = call.client.command("consult", target=target)
    assert ack["ok"] is True, ack


def _consulted_leg(tenant, real_switch, call: AgentCall) -> str:
    """The consulted agent's leg (its engaged mark), once it answered."""
    target = eventually(lambda: sip_agents.presence().engaged_by(str(tenant.account_id), call.second.id),
                        timeout=5, what="the consulted agent claimed")
    eventually(lambda: real_switch.api(f"uuid_getvar {target} sbc_consult_answered", check=False).strip() == "true",
               timeout=15, what="the consulted agent answered")
    return target


@contextlib.contextmanager
def consulting_until_bye(product, tenant, channel_queue, sipp, real_switch, phone_seconds: int) -> Iterator[tuple[AgentCall, str]]:
    """A PCMA caller talking until the switch's BYE, with the first agent, who consults the
    second; yields the call and the consulted leg once it answered."""
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, codec="PCMA",
                           caller_scenario="uac-talk-until-bye.xml", phone_seconds=phone_seconds) as call:
        _consult(call, tenant)
        yield call, _consulted_leg(tenant, real_switch, call)


def _running(real_switch, leg: str) -> str:
    """The application ``leg`` runs now (the switch sets ``current_application`` as each starts)."""
    return real_switch.api(f"uuid_getvar {leg} current_application", check=False).strip()


def _in_room(real_switch, *legs: str) -> bool:
    return all(_running(real_switch, leg) == "conference" for leg in legs)


def _bridged_to(real_switch, leg: str, other: str) -> bool:
    rows = json.loads(real_switch.api("show calls as json", check=False) or "{}").get("rows") or []
    return any({row.get("uuid"), row.get("b_uuid")} == {leg, other} for row in rows)


def _details(tenant, record, segments: int) -> dict:
    return poll(lambda: (lambda d: d if len(d["segments"]) == segments and d["summary"] else None)(
        tenant.admin.get(f"/api/call-records/{record['public_id']}")), 15)


def test_given_an_agent_consulting_another_agent_when_it_completes_then_the_second_agent_has_the_caller(
        product, tenant, channel_queue, sipp, real_switch):
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, caller_seconds=14,
                           phone_seconds=14 + PHONE_MARGIN_SECONDS) as call:
        first, second = call.first, call.second
        _consult(call, tenant)
        # refused consult_not_answered until the second agent's phone answered
        eventually(lambda: call.client.command("completeTransfer")["ok"], timeout=15, what="the transfer completed")

        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10, what="the first agent's leg gone")
        moved = call.client.expect("call", lambda m: m["phase"] == "transferred", timeout=20)
        assert moved["to"] == {"type": "agent", "agentId": second.id}
        result = call.caller.wait()  # the caller hangs up 14 s after its answer, talking to the second agent
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(call.number)[0]
        assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == second.id
        [transferred] = [e["payload"] for e in tenant.events("call.transferred")
                         if e["payload"]["callId"] == call.call_id]
        assert (transferred["kind"], transferred["from"], transferred["to"]) == (
            "attended", {"agentId": first.id}, {"type": "agent", "agentId": second.id})
        details = _details(tenant, record, 2)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, True), (second.id, False)]
        assert details["summary"]["transfer_count"] == 1


def test_given_an_agent_consulting_another_agent_when_it_cancels_then_it_has_the_caller_again(
        product, tenant, channel_queue, sipp, real_switch):
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, caller_seconds=10,
                           phone_seconds=10 + PHONE_MARGIN_SECONDS) as call:
        _consult(call, tenant)
        time.sleep(2.0)  # scenario: the consultation lasts 2 s

        ack = call.client.command("cancelConsult")

        assert ack["ok"] is True, ack
        result = call.caller.wait()  # the caller hangs up 10 s after its answer, back with the first agent
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(call.number)[0]
        assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == call.first.id
        assert [e for e in tenant.events("call.transferred") if e["payload"]["callId"] == call.call_id] == []
        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10,
                   what="the first agent's leg ended with the caller")
        details = _details(tenant, record, 1)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(call.first.id, False)]


def test_given_a_cancelled_consultation_when_the_agent_consults_again_and_completes_then_the_second_agent_has_the_caller(
        product, tenant, channel_queue, sipp, real_switch):
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, caller_seconds=18,
                           phone_seconds=18 + PHONE_MARGIN_SECONDS) as call:
        first, second = call.first, call.second
        _consult(call, tenant)
        time.sleep(2.0)  # scenario: the first consultation lasts 2 s
        assert call.client.command("cancelConsult")["ok"] is True
        time.sleep(2.0)  # scenario: the agent talks 2 s with its caller again (their room)

        ack = call.client.command("consult", target={"type": "agent", "agentId": second.id})

        assert ack["ok"] is True, ack  # not call_not_bridged: the agent's leg left the room
        assert _callstate(real_switch, call.leg) is not None, "the first agent's leg was hung up"
        eventually(lambda: call.client.command("completeTransfer")["ok"], timeout=15, what="the transfer completed")
        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10, what="the first agent's leg gone")
        result = call.caller.wait()  # the caller hangs up 18 s after its answer, talking to the second agent
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(call.number)[0]
        assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == second.id
        transferred = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call.call_id]
        assert [(t["kind"], t["to"]) for t in transferred] == [("attended", {"type": "agent", "agentId": second.id})]
        details = _details(tenant, record, 2)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, True), (second.id, False)]
        assert details["summary"]["transfer_count"] == 1


def test_given_an_answered_consultation_when_the_agent_swaps_then_it_hears_the_caller_while_the_target_holds_and_back(
        product, tenant, channel_queue, sipp, real_switch):
    """Only the caller talks (sipp agents send nothing): what the switch sends each party says
    who is with whom. Consulting, the agent hears the silent target and the caller hears music;
    swapped, the agent hears the caller, the caller hears the silent agent and the target hears
    music; swapped back, as consulting."""
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, codec="PCMA",
                           caller_scenario="uac-talk-long.xml",  # talks 21 s
                           phone_seconds=TALK_LONG_SECONDS + PHONE_MARGIN_SECONDS) as call:
        _consult(call, tenant)
        parties = {"caller": call.call_id, "agent": call.leg, "target": _consulted_leg(tenant, real_switch, call)}
        heard = {"consulting": _heard(real_switch, parties, "consulting")}

        assert call.client.command("swap")["ok"] is True
        eventually(lambda: _in_room(real_switch, parties["caller"], parties["agent"]), timeout=10,
                   what="the caller and the agent in their room")
        heard["swapped"] = _heard(real_switch, parties, "swapped")
        assert call.client.command("swap")["ok"] is True
        eventually(lambda: _bridged_to(real_switch, parties["agent"], parties["target"]), timeout=10,
                   what="the agent bridged to the target again")
        heard["back"] = _heard(real_switch, parties, "back")
        print("swap: loudness (RMS) of what each party is sent:", heard)

        assert heard["consulting"]["agent"] < QUIET and heard["consulting"]["caller"] > LOUD, heard
        assert heard["swapped"]["agent"] > LOUD, heard       # the agent hears the caller
        assert heard["swapped"]["caller"] < QUIET, heard     # the caller hears the silent agent, not music
        assert heard["swapped"]["target"] > LOUD, heard      # the target holds with music
        assert heard["back"]["agent"] < QUIET and heard["back"]["target"] < QUIET, heard
        assert heard["back"]["caller"] > LOUD, heard         # music again
        eventually(lambda: call.client.command("completeTransfer")["ok"], timeout=10, what="the transfer completed")
        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10, what="the first agent's leg gone")
        result = call.caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(call.number)[0]
        assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == call.second.id


def test_given_a_three_way_call_when_the_agent_leaves_then_the_caller_and_the_target_still_hear_each_other(
        product, tenant, channel_queue, sipp, real_switch):
    """The caller and the consulted agent's phone talk, the first agent's phone is silent. In
    the three-way call the agent is sent both; after it leaves, the caller is sent the target's
    speech and the target the caller's."""
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, codec="PCMA",
                           caller_scenario="uac-talk-long.xml",  # talks 21 s, then hangs up
                           second_scenario="phone-answer-talk-ooc.xml",
                           phone_seconds=TALK_LONG_SECONDS + PHONE_MARGIN_SECONDS) as call:
        first, second = call.first, call.second
        _consult(call, tenant)
        target = _consulted_leg(tenant, real_switch, call)

        assert call.client.command("conference")["ok"] is True
        eventually(lambda: _in_room(real_switch, call.call_id, call.leg, target), timeout=10,
                   what="the three legs in the room")
        three = _heard(real_switch, {"caller": call.call_id, "agent": call.leg, "target": target}, "three-way")
        assert call.client.command("leave")["ok"] is True
        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10, what="the first agent's leg gone")
        after = _heard(real_switch, {"caller": call.call_id, "target": target}, "after-leave")
        print("three-way: loudness (RMS) of what each party is sent:", {"three-way": three, "after leave": after})

        assert three["agent"] > LOUD and three["caller"] > LOUD and three["target"] > LOUD, three
        assert after["caller"] > LOUD, after   # the caller hears the target
        assert after["target"] > LOUD, after   # the target hears the caller
        result = call.caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(call.number)[0]
        assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == second.id
        added = [e["payload"] for e in tenant.events("call.conferenced") if e["payload"]["callId"] == call.call_id]
        left = [e["payload"] for e in tenant.events("call.conference.left") if e["payload"]["callId"] == call.call_id]
        assert [(a["agentId"], a["to"]) for a in added] == [(first.id, {"type": "agent", "agentId": second.id})]
        assert [a["agentId"] for a in left] == [first.id]
        details = _details(tenant, record, 2)
        assert [(s["agent_id"], s["transferred"], s["conferenced"]) for s in details["segments"]] == [
            (first.id, False, True), (second.id, False, True)]
        assert details["summary"]["transfer_count"] == 0


HANG_UP_PHONE_SECONDS = 15  # the phones stay registered this long (the caller is hung up ~8 s in)


def test_given_an_agent_consulting_another_agent_when_the_consulted_agent_hangs_up_then_the_agent_and_the_caller_hear_each_other(
        product, tenant, channel_queue, sipp, real_switch):
    """The consulted agent's phone answers, then hangs up itself (agent-answer-bye-ooc.xml: its
    BYE 2.5 s after the answer). The caller and the first agent's phone both talk: once back in
    their room, each is sent the other's speech."""
    with caller_with_agent(product, tenant, channel_queue, sipp, real_switch, codec="PCMA",
                           caller_scenario="uac-talk-until-bye.xml", first_scenario="phone-answer-talk-ooc.xml",
                           second_scenario="agent-answer-bye-ooc.xml", phone_seconds=HANG_UP_PHONE_SECONDS) as call:
        first, second = call.first, call.second
        _consult(call, tenant)

        failed = call.client.expect("consult", lambda m: m["phase"] == "failed", timeout=15)
        eventually(lambda: _in_room(real_switch, call.call_id, call.leg), timeout=10,
                   what="the caller and the first agent in their room")
        heard = _heard(real_switch, {"caller": call.call_id, "agent": call.leg}, "consulted-hung-up")
        print("consulted party hung up: loudness (RMS) of what each party is sent:", heard)
        tenant.admin.post(f"/api/calls/{call.call_id}/actions", {"action": "hangup", "reason": "test_done"})

        assert heard["caller"] > LOUD, heard  # the caller hears the first agent
        assert heard["agent"] > LOUD, heard   # the first agent hears the caller
        assert (failed["reason"], failed["to"]) == ("missed", {"type": "agent", "agentId": second.id}), failed
        result = call.caller.wait()
        assert result.ok, result.errors or result.stdout[-1500:]
        record = tenant.wait_record(call.number)[0]
        assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == first.id
        [failed_event] = [e["payload"] for e in tenant.events("agent.consult.failed")
                          if e["payload"]["callId"] == call.call_id]
        assert (failed_event["agentId"], failed_event["reason"]) == (first.id, "missed")
        [withdrawn] = [e["payload"] for e in tenant.events("agent.consult.withdrawn")
                       if e["payload"]["callId"] == call.call_id]
        assert (withdrawn["agentId"], withdrawn["reason"]) == (second.id, "missed")
        assert [e for e in tenant.events("call.transferred") if e["payload"]["callId"] == call.call_id] == []
        details = _details(tenant, record, 1)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, False)]
        assert details["summary"]["transfer_count"] == 0


NUMBER_PHONE_SECONDS = 15  # the agent's phone stays registered this long (the test needs ~8 s)


def test_given_an_agent_consulting_a_phone_number_when_it_completes_then_the_caller_hears_the_carrier(
        product, routing_tenant, sipp, real_switch, carriers):
    """A number target through least-cost routing to a sipp carrier that answers and speaks
    (carrier-talk.xml.tmpl), presenting a callerId of the account's: the agent completes, the
    caller meets the carrier's leg in their room and hears its speech (hold_audio.CallerEar)."""
    tenant = routing_tenant
    callee = carriers.talking()
    carrier_id, gateway_id = outbound.carrier(tenant, "consulted", callee.port)
    prefix = outbound.prefix()
    outbound.route(product, tenant, prefix, [carrier_id])
    outbound.wait_gateways(real_switch, gateway_id)
    caller_id = tenant.number_for([{"verb": "hangup"}])  # a number of the account's: presented
    target = {"type": "number", "number": f"+{prefix}5550123", "callerId": caller_id}
    queue = tenant.admin.post("/api/queues", {"name": f"cn-{uuid.uuid4().hex[:6]}", "offer_timeout_seconds": 15,
                                              "wrap_up_seconds": 1, "announce_position": False})
    agent = sip_agents.new_agent(tenant, [queue["id"]], prefix="cn")
    assert poll(lambda: sip_agents.in_directory(real_switch, agent), 15), "directory not applied"
    phone = sip_agents.register(sipp, real_switch, agent, "agent-answer-ooc.xml", seconds=NUMBER_PHONE_SECONDS)
    client = channel_tests._channel(product, tenant, agent)
    try:
        sip_agents.make_available(tenant, agent)
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        with CallerEar() as ear:
            caller = sipp.start_calls(number, scenario="uac-wait-bye-listen.xml",
                                      extra=("-key", "rtp_port", str(ear.port)))
            call_id = client.expect("offer", timeout=20)["offerId"]
            client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
            leg = agent_leg(tenant, agent)
            log_from = real_switch.log_offset()

            ack = client.command("consult", target=target)

            assert ack["ok"] is True, ack
            consulted = eventually(lambda: next((r for r in json.loads(real_switch.api("show channels as json")
                                                                       or "{}").get("rows") or []
                                                 if r["uuid"] not in (call_id, leg)), None),
                                   timeout=10, what="the consulted leg")
            # refused consult_not_answered until the carrier answered
            eventually(lambda: client.command("completeTransfer")["ok"], timeout=10, what="the transfer completed")
            eventually(lambda: _callstate(real_switch, leg) is None, timeout=10, what="the agent's leg gone")
            eventually(lambda: _in_room(real_switch, call_id, consulted["uuid"]), timeout=10,
                       what="the caller and the carrier's leg in their room")
            moved = client.expect("call", lambda m: m["phase"] == "transferred", timeout=10)
            met_at = time.monotonic()
            heard = eventually(lambda: ear.loud_seconds(met_at, time.monotonic()) >= 1.0 or None, timeout=10,
                               what="the caller hearing the carrier")
            tenant.admin.post(f"/api/calls/{call_id}/actions", {"action": "hangup", "reason": "test_done"})
            result = caller.wait(30)
        assert result.ok, result.errors or result.stdout[-1500:]
        assert heard and moved["to"] == target
        # the callerId sent to the carrier: the consulted leg's caller number until it answered
        # (``show channels`` has the flipped one: the number dialled)
        flips = [line for line in real_switch.log_since(log_from).splitlines()
                 if line.startswith(consulted["uuid"]) and "Flipping CID from" in line]
        assert flips and f'<{caller_id.lstrip("+")}> to' in flips[0].replace("<+", "<"), flips
        record = tenant.wait_record(number)[0]
        assert str(record["call_id"]) == call_id and str(record["agent_id"]) == agent.id
        # the carrier the caller now talks through, as a dial verb's routed leg names it
        assert (str(record["dial_carrier_id"]), str(record["dial_gateway_id"])) == (carrier_id, gateway_id), record
        [transferred] = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call_id]
        assert (transferred["kind"], transferred["from"], transferred["to"]) == ("attended", {"agentId": agent.id}, target)
        details = _details(tenant, record, 1)
        assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(agent.id, True)]
        assert details["summary"]["transfer_count"] == 1
    finally:
        client.close()
        phone.stop()  # its registration is this test's own: no need to wait for it to end
