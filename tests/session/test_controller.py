"""The controller process as ``sbc controller`` runs it: outbound server, a node link to the
(simulated) FreeSWITCH, the outbox relay to a real RabbitMQ, reconciliation on reconnect."""
from __future__ import annotations

import uuid

import pytest

from app.config import RuntimeConfig
from app.db.engine import tenant_session
from app.events.consumer import EventConsumer
from app.events.exchanges import CALL_EVENTS
from app.events.payloads import call_originate, emit
from app.events.work_queues import CALL_ORIGINATE
from app.voice.controller import Controller
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan
from tests.simulator import Call, place_call


@pytest.fixture
def running_controller(inbound_sim, amqp_vhost, tmp_path, monkeypatch):
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    host, port = inbound_sim.address
    config = RuntimeConfig({
        "freeswitch.nodes": [{"host": host, "port": port, "password": "ClueCon"}],
        "controller.listen": {"host": "127.0.0.1", "port": 0},
    })
    ctl = Controller(config)
    ctl.start()
    node = ctl.nodes[0]
    eventually(lambda: node.connected, timeout=5, what="the controller connected to the switch")
    yield ctl
    ctl.stop()


def test_given_running_controller_when_call_ends_then_its_events_reach_a_rabbitmq_consumer(
        running_controller, number_with_app, owner_conn):
    received = []
    consumer = EventConsumer([(CALL_EVENTS, "call.#")], received.append).start()
    try:
        assert consumer.ready.wait(10)
        account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
        call = place_call(Call(callee=number), running_controller.server.address)
        assert call.wait(10)
        record = call_record(owner_conn, call.uuid)
        mine = lambda: [e for e in received if e.trace_id == str(record["trace_id"])]  # noqa: E731
        eventually(lambda: {"call.started", "call.answered", "call.ended"} <= {e.type for e in mine()})
        ended = next(e for e in mine() if e.type == "call.ended")
        assert ended.account == str(account.id)
        assert ended.payload["callId"] == call.uuid
    finally:
        consumer.stop()


def test_given_esl_link_drops_when_it_reconnects_then_calls_gone_from_freeswitch_are_closed(
        running_controller, inbound_sim, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 30}])
    kept = place_call(Call(callee=number).hangup_after(1.5), running_controller.server.address)
    gone = place_call(Call(callee=number), running_controller.server.address)
    live = running_controller.services.live_calls
    eventually(lambda: {kept.uuid, gone.uuid} <= set(live))
    inbound_sim.add_channel(uuid=kept.uuid)   # FreeSWITCH still has only one of the two

    inbound_sim.drop_connections()
    eventually(lambda: running_controller.nodes[0].reconnects >= 1)
    eventually(lambda: gone.uuid not in live)
    assert kept.uuid in live
    limiter = running_controller.services.limiter
    assert kept.wait(10)
    eventually(lambda: not live)
    assert limiter.counts(account.id)[0] == 0
    assert call_record(owner_conn, kept.uuid)["status"] == "completed"


def test_given_call_originate_on_the_bus_when_a_controller_takes_it_then_the_answered_leg_is_recorded(
        running_controller, inbound_sim, number_with_app, owner_conn):
    consumer = next(c for c in running_controller._background if getattr(c, "queue_name", None) == CALL_ORIGINATE.name)
    assert consumer.ready.wait(10)
    account, caller_id, app_id = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    two_carrier_plan(account.id)
    running_controller.routing.reload()
    call_id, trace_id = uuid.uuid4(), uuid.uuid4()
    with tenant_session(account.id) as session:
        emit("call.originate", call_originate(call_id=call_id, phone_number=GERMAN_NUMBER,
                                              caller_id=caller_id, application_id=app_id),
             account_id=account.id, trace_id=trace_id, session=session)

    eventually(lambda: call_record(owner_conn, str(call_id)) is not None)
    record = call_record(owner_conn, str(call_id))
    assert (record["direction"], record["status"], record["trace_id"]) == ("outbound", "completed", trace_id)
    assert len(inbound_sim.originates) == 1


def test_given_switch_image_without_a_module_when_the_link_comes_back_then_heartbeat_names_it(
        running_controller, inbound_sim):
    where = "%s:%s" % inbound_sim.address
    eventually(lambda: running_controller.missing_modules.get(where) == [])

    inbound_sim.loaded_modules.discard("mod_flite")
    inbound_sim.drop_connections()  # FreeSWITCH restarted with another image

    eventually(lambda: running_controller.missing_modules.get(where) == ["mod_flite"])
    details = running_controller.heartbeat._payload()["details"]
    assert details["nodes"][where] == {"missingModules": ["mod_flite"]}
