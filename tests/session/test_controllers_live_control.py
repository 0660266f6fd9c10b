"""Live call control across controllers: two real ``Controller``s in one test process, each on
its own outbound socket port with its own link to the ESL simulator (two controller hosts, or
two ``sbc controller`` processes), the real API (Flask app), PostgreSQL, Redis and RabbitMQ.
A REST action or an agent transfer must reach the controller that drives the call (its
``live-call`` key names it) and only that one (app/calls/live_calls.py)."""
from __future__ import annotations

import uuid

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import text

import app.voice.controller as controller_module
from app.config import RuntimeConfig
from app.voice.controller import Controller
from tests.agent_channel.conftest import ChannelServer
from tests.plugins.api import SeedUser
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record, hangups
from tests.session.desk import agent_desk, outbox_payloads, rows
from tests.session.test_live_control import PAUSE, number_for
from tests.simulator import Call, place_call
from tests.simulator.scenario import RingingPhone


@pytest.fixture
def two_controllers(inbound_sim, amqp_vhost, tmp_path, monkeypatch):
    """Two controllers, each listening on a port of its own and connected to the switch."""
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    host, esl_port = inbound_sim.address
    started = []
    for _ in range(2):
        # separate processes in production; here one test process: a metrics registry each
        monkeypatch.setattr(controller_module, "REGISTRY", CollectorRegistry())
        ctl = Controller(RuntimeConfig({
            "freeswitch.nodes": [{"host": host, "port": esl_port, "password": "ClueCon"}],
            "controller.listen": {"host": "127.0.0.1", "port": 0},
            "health.controller_port": 0}))
        ctl.start()
        started.append(ctl)
    for ctl in started:
        eventually(lambda: ctl.nodes[0].connected and ctl.live_control.subscribed.is_set(), timeout=15,
                   what="the controller linked to the switch and listening for live control")
    yield started
    for ctl in started:
        ctl.stop()


def _done(controllers) -> list[int]:
    """Live actions each controller applied."""
    return [ctl.live_control.done for ctl in controllers]


def test_given_a_caller_driven_by_the_second_controller_when_the_api_transfers_it_blind_to_another_agent_then_that_controller_applies_it_and_the_first_does_nothing(
        two_controllers, admin, tenant, owner_engine, owner_conn, redis_client):
    first, second = two_controllers
    number = number_for(tenant, [{"verb": "queue", "name": "support", "priority": 2}])
    agents, _presence = agent_desk(owner_engine, owner_conn, redis_client, tenant.account_id)
    ana_phone, ben_phone = RingingPhone(), RingingPhone(talk=1.0)
    call = place_call(Call(callee=number).bridge_rings(ana_phone).bridge_rings(ben_phone), second.server.address)
    try:
        assert ana_phone.ringing.wait(10), "ana was not offered the call"
        ana_phone.answer()
        eventually(lambda: call.uuid in second.services.live_sessions
                   and second.services.live_sessions[call.uuid].other_leg, timeout=10,
                   what="the caller bridged to ana on the second controller")
        assert call.uuid not in first.services.live_sessions

        response = admin.post(f"/api/calls/{call.uuid}/actions",
                              json={"action": "transfer", "target": {"type": "agent", "agentId": agents["ben"]}})

        assert response.status_code == 200, response.get_json()
        assert _done(two_controllers) == [0, 1]
        assert ben_phone.ringing.wait(10), "ben was not offered the transferred call"
        ben_phone.answer()  # ben talks 1 s (his phone's talk), then hangs up
        assert call.wait(15), "the call did not end"
    finally:
        call.kill()

    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert record["agent_id"] == uuid.UUID(agents["ben"])
    assert "transfer:agent" in record["journey"]
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert (event["kind"], event["from"], event["to"], event["by"]) == (
        "blind", {"agentId": agents["ana"]}, {"type": "agent", "agentId": agents["ben"]},
        {"userId": str(tenant.admin.id), "apiKeyId": None, "agentId": None})
    segments = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c ORDER BY started_at",
                    c=call.uuid)
    assert [(str(s["agent_id"]), s["transferred"]) for s in segments] == [(agents["ana"], True),
                                                                        (agents["ben"], False)]
    [summary] = rows(owner_conn, "SELECT * FROM interaction_summary WHERE trace_id = :t", t=record["trace_id"])
    assert summary["transfer_count"] == 1
    assert _done(two_controllers) == [0, 1], "the first controller never acted on the call"


def test_given_a_caller_driven_by_the_second_controller_when_its_agent_transfers_it_to_a_queue_on_the_agent_channel_then_that_controller_applies_it(
        two_controllers, api, admin, tenant, owner_engine, owner_conn, redis_client):
    first, second = two_controllers
    number = number_for(tenant, [{"verb": "queue", "name": "support", "priority": 2}])
    agents, presence = agent_desk(owner_engine, owner_conn, redis_client, tenant.account_id,
                                  queues=("support", "billing"))
    ana_user = owner_conn.execute(text("SELECT user_id FROM agents WHERE id = :a"), {"a": agents["ana"]}).scalar_one()
    tenant.users["ana"] = SeedUser(ana_user, "ana", "", "agent", [])
    channel = ChannelServer()  # an API process of its own: the agent's WebSocket
    ana_phone = RingingPhone()
    call = place_call(Call(callee=number).bridge_rings(ana_phone), second.server.address)
    try:
        ana = channel.connect(tenant.host)
        ana.auth(api.mint(tenant, "ana", session="agent"))
        assert ana_phone.ringing.wait(10), "ana was not offered the call"
        ana_phone.answer()
        ana.expect("call", lambda m: m["phase"] == "connected")  # what her desk waits for to transfer

        ack = ana.command("transfer", target={"type": "queue", "name": "billing"})

        assert ack["ok"] is True, ack
        assert _done(two_controllers) == [0, 1]
        waiting = presence.waiting_key(str(tenant.account_id), "billing")
        eventually(lambda: redis_client.zscore(waiting, call.uuid) is not None, timeout=10,
                   what="the caller in billing's line")
        assert admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"}).status_code == 200
        assert call.wait(15), "the call did not end"
    finally:
        call.kill()
        channel.stop()

    assert _done(two_controllers) == [0, 2]
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert "transfer:queue" in record["journey"]
    [event] = outbox_payloads(owner_conn, call.uuid, "call.transferred")
    assert (event["kind"], event["to"], event["by"]) == (
        "blind", {"type": "queue", "name": "billing"}, {"agentId": agents["ana"], "userId": None, "apiKeyId": None})
    [segment] = rows(owner_conn, "SELECT * FROM interaction_segment WHERE call_id = :c", c=call.uuid)
    assert (str(segment["agent_id"]), segment["transferred"]) == (agents["ana"], True)


def test_given_a_call_driven_by_the_first_controller_when_the_api_hangs_it_up_then_the_first_controller_ends_it_and_the_second_does_nothing(
        two_controllers, admin, tenant, owner_conn, redis_client):
    first, second = two_controllers
    number = number_for(tenant, PAUSE)
    call = place_call(Call(callee=number), first.server.address)
    try:
        eventually(lambda: call.executed("sleep"), timeout=10, what="the pause running on the first controller")
        assert call.uuid in first.services.live_sessions and call.uuid not in second.services.live_sessions

        response = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup", "reason": "fraud_check"})

        assert response.status_code == 200, response.get_json()
        assert call.wait(5), "the call did not end"
    finally:
        call.kill()
    assert _done(two_controllers) == [1, 0]
    record = eventually(lambda: call_record(owner_conn, call.uuid), timeout=10, what="the record")
    assert (record["hangup_reason"], record["hangup_cause"]) == ("fraud_check", "NORMAL_CLEARING")


def test_given_the_controller_driving_a_call_no_longer_listening_when_the_api_acts_on_it_then_503_and_the_other_controller_does_nothing(
        two_controllers, admin, tenant):
    first, second = two_controllers
    call = place_call(Call(callee=number_for(tenant, PAUSE)), first.server.address)
    try:
        eventually(lambda: call.executed("sleep"), timeout=10, what="the pause running on the first controller")
        first.live_control.stop()  # as when its process dies: the call's live-call key outlives it

        response = admin.post(f"/api/calls/{call.uuid}/actions", json={"action": "hangup"})

        assert response.status_code == 503 and response.get_json()["code"] == "call_control_unavailable"
        assert _done(two_controllers) == [0, 0]
        assert call.uuid in first.services.live_sessions and not hangups(call), "nobody hung the call up"
    finally:
        call.kill()
