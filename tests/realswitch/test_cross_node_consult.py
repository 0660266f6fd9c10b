"""An attended transfer to an agent registered on another FreeSWITCH node, on two real switches
(docs/agents.md "Several FreeSWITCH nodes" and "Attended transfers"): a sipp caller on node A
(the package's switch) is answered by agent X (node A); X consults agent Y, whose sipp phone
registered on node B (tests/realswitch/nodes.py: this module's own), so the consultation's
``originate`` on A rings B's agent profile and B bridges it to Y's registration. Everything
else (the parked agent's ``intercept``, the rooms, the completion) happens on A with A's leg.

What only two real switches can say: that the consulted leg to B carries audio both ways once
the caller meets it in their room, and that a REST hang-up of the caller then ends the call and
leaves no channel on either node."""
from __future__ import annotations

import time

from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch import nodes
from tests.realswitch.agent_call import caller_with_agent
from tests.realswitch.provision import poll
from tests.realswitch.sipp import Sipp
from tests.realswitch.test_agent_consult_realswitch import (
    LOUD,
    _callstate,
    _consult,
    _consulted_leg,
    _details,
    _in_room,
    channel_queue,  # noqa: F401  (the fixture: a queue with two SIP agents)
)
from tests.realswitch.test_supervisor import _heard

node_b, two_nodes = nodes.node_b, nodes.two_nodes  # this module's node B (module-scoped fixtures)

PHONE_SECONDS = 20  # the phones stay registered this long (each test hangs the caller up ~10 s in)
CALL_ENDED_SECONDS = 5  # a REST hang-up ends the call (call.ended) within this


def _on_node_b(channel_queue, node_b, realswitch_workdir) -> tuple:  # noqa: F811
    """The second agent's phone registers on node B: its directory there too (the shared folder,
    reloaded by the controller on both nodes)."""
    _queue, (_first, second) = channel_queue
    assert poll(lambda: sip_agents.in_directory(node_b, second), 15), "directory not applied on node B"
    return node_b, Sipp(node_b, realswitch_workdir / "sipp-b")


def _hang_up_through_the_api(tenant, call_id: str) -> tuple[dict, float]:
    """``POST /api/calls/:callId/actions`` hangup; the call's ``call.ended`` and how long after
    the request it was written."""
    asked = time.monotonic()
    tenant.admin.post(f"/api/calls/{call_id}/actions", {"action": "hangup", "reason": "test_done"})
    ended = eventually(lambda: next((e["payload"] for e in tenant.events("call.ended")
                                     if e["payload"]["callId"] == call_id), None),
                       timeout=CALL_ENDED_SECONDS, what="call.ended after the REST hang-up")
    return ended, round(time.monotonic() - asked, 2)


def _talking_caller_and_y_on_node_b(product, tenant, queue, sipp, real_switch, node_b, workdir,
                                    **phone_scenario: str):
    """A talking caller answered by X on node A, Y's phone registered on node B;
    ``phone_scenario``: which agent's phone talks (``first_scenario`` or ``second_scenario``)."""
    return caller_with_agent(product, tenant, queue, sipp, real_switch, codec="PCMA",
                             caller_scenario="uac-talk-until-bye.xml", phone_seconds=PHONE_SECONDS,
                             second_on=_on_node_b(queue, node_b, workdir), **phone_scenario)


def _no_channel_left(real_switch, node_b) -> None:
    for name, switch in (("A", real_switch), ("B", node_b)):
        assert switch.wait_idle(timeout=10) == 0, f"node {name}: {switch.api('show channels')}"


def test_given_an_agent_consulting_an_agent_on_node_b_when_it_completes_then_the_caller_and_that_agent_talk_and_a_rest_hang_up_ends_the_call_on_both_nodes(
        product, tenant, channel_queue, sipp, real_switch, two_nodes, realswitch_workdir):  # noqa: F811
    """The caller and Y's phone talk, X's phone is silent: once X completes, what node A sends
    the caller is Y's speech and what it sends node B (the consulted leg's write) the caller's."""
    node_b = two_nodes
    with _talking_caller_and_y_on_node_b(product, tenant, channel_queue, sipp, real_switch, node_b, realswitch_workdir,
                                         second_scenario="phone-answer-talk-ooc.xml") as call:
        first, second = call.first, call.second
        registered_on = sip_agents.presence().registered_on(second.domain, second.sip_username)
        assert registered_on == node_b.api("eval ${core_uuid}").strip()
        _consult(call, tenant)
        target = _consulted_leg(tenant, real_switch, call)  # A's leg to node B

        eventually(lambda: call.client.command("completeTransfer")["ok"], timeout=15, what="the transfer completed")

        eventually(lambda: _callstate(real_switch, call.leg) is None, timeout=10, what="the first agent's leg gone")
        eventually(lambda: _in_room(real_switch, call.call_id, target), timeout=10,
                   what="the caller and the leg to node B in their room")
        moved = call.client.expect("call", lambda m: m["phase"] == "transferred", timeout=10)
        heard = _heard(real_switch, {"caller": call.call_id, "target": target}, "cross-node-complete")
        ended, ended_after = _hang_up_through_the_api(tenant, call.call_id)
        print("cross-node complete: loudness (RMS) of what each party is sent:", heard,
              f"; call.ended {ended_after} s after the REST hang-up")
        result = call.caller.wait(30)

    assert heard["caller"] > LOUD, heard  # the caller hears Y (through node B)
    assert heard["target"] > LOUD, heard  # Y is sent the caller's speech
    assert moved["to"] == {"type": "agent", "agentId": second.id}
    assert result.ok, result.errors or result.stdout[-1500:]
    assert ended["hangupReason"] == "test_done" and ended["agentId"] == second.id, ended
    record = tenant.wait_record(call.number)[0]
    assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == second.id
    assert record["hangup_reason"] == "test_done", record
    [transferred] = [e["payload"] for e in tenant.events("call.transferred") if e["payload"]["callId"] == call.call_id]
    assert (transferred["kind"], transferred["from"], transferred["to"]) == (
        "attended", {"agentId": first.id}, {"type": "agent", "agentId": second.id})
    details = _details(tenant, record, 2)
    assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, True), (second.id, False)]
    assert details["summary"]["transfer_count"] == 1
    _no_channel_left(real_switch, node_b)


def test_given_an_agent_consulting_an_agent_on_node_b_when_it_cancels_then_it_and_the_caller_hear_each_other_again(
        product, tenant, channel_queue, sipp, real_switch, two_nodes, realswitch_workdir):  # noqa: F811
    """The caller and X's phone talk, Y's is silent: after the cancel, X and the caller meet in
    their room on A and each is sent the other's speech; Y's leg on both nodes is gone."""
    node_b = two_nodes
    with _talking_caller_and_y_on_node_b(product, tenant, channel_queue, sipp, real_switch, node_b, realswitch_workdir,
                                         first_scenario="phone-answer-talk-ooc.xml") as call:
        first, second = call.first, call.second
        _consult(call, tenant)
        target = _consulted_leg(tenant, real_switch, call)

        assert call.client.command("cancelConsult")["ok"] is True

        eventually(lambda: _callstate(real_switch, target) is None, timeout=10, what="the leg to node B gone")
        assert node_b.wait_idle(timeout=10) == 0, node_b.api("show channels")
        eventually(lambda: _in_room(real_switch, call.call_id, call.leg), timeout=10,
                   what="the caller and the first agent in their room")
        heard = _heard(real_switch, {"caller": call.call_id, "agent": call.leg}, "cross-node-cancel")
        ended, ended_after = _hang_up_through_the_api(tenant, call.call_id)
        print("cross-node cancel: loudness (RMS) of what each party is sent:", heard,
              f"; call.ended {ended_after} s after the REST hang-up")
        result = call.caller.wait(30)

    assert heard["caller"] > LOUD, heard  # the caller hears X again
    assert heard["agent"] > LOUD, heard   # X hears the caller
    assert result.ok, result.errors or result.stdout[-1500:]
    assert ended["hangupReason"] == "test_done" and ended["agentId"] == first.id, ended
    record = tenant.wait_record(call.number)[0]
    assert str(record["call_id"]) == call.call_id and str(record["agent_id"]) == first.id
    assert [e for e in tenant.events("call.transferred") if e["payload"]["callId"] == call.call_id] == []
    [withdrawn] = [e["payload"] for e in tenant.events("agent.consult.withdrawn")
                   if e["payload"]["callId"] == call.call_id]
    assert (withdrawn["agentId"], withdrawn["reason"]) == (second.id, "cancelled")
    details = _details(tenant, record, 1)
    assert [(s["agent_id"], s["transferred"]) for s in details["segments"]] == [(first.id, False)]
    _no_channel_left(real_switch, node_b)
