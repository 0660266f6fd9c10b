"""``sbc controller --processes N``: sibling controllers on one outbound socket port (the
kernel spreads the switch's sockets over them) do not take each other's calls for lost or
orphan ones. Two controllers against the ESL simulator, real PostgreSQL/Redis/RabbitMQ."""
from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import text

import app.voice.controller as controller_module
from app.config import RuntimeConfig
from app.voice.controller import Controller
from tests.faults.processes import free_port
from tests.plugins.eventually import eventually
from tests.session.conftest import call_record
from tests.simulator import Call, place_call

CALLS = 16


@pytest.fixture
def siblings(inbound_sim, amqp_vhost, tmp_path, monkeypatch):
    """Two controllers, processes=2, indices 0 and 1, both bound to one port."""
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    host, esl_port = inbound_sim.address
    port = free_port()
    config = {"freeswitch.nodes": [{"host": host, "port": esl_port, "password": "ClueCon"}],
              "controller.listen": {"host": "127.0.0.1", "port": port},
              "health.controller_port": 0}
    started = []
    for index in range(2):
        # separate processes in production; here one test process: a metrics registry each
        monkeypatch.setattr(controller_module, "REGISTRY", CollectorRegistry())
        ctl = Controller(RuntimeConfig(dict(config)), process_index=index, processes=2)
        ctl.start()
        started.append(ctl)
    for ctl in started:
        eventually(lambda: ctl.nodes[0].connected, timeout=15)
    yield started
    for ctl in started:
        ctl.stop()


def _started(owner_conn) -> set[str]:
    return {r[0] for r in owner_conn.execute(text(
        "SELECT body->'payload'->>'callId' FROM event_outbox WHERE routing_key = 'call.started'"))}


def _as_in_socket_app(inbound_sim, call_id: str, port: int, age_seconds: float = 60.0):
    """The switch lists the call in the socket application aimed at the shared port, older
    than the orphan grace."""
    ch = inbound_sim.add_channel(uuid=call_id)
    ch.application, ch.application_data = "socket", f"127.0.0.1:{port} async full"
    ch.created_us -= int(age_seconds * 1_000_000)
    return ch


def test_given_two_controller_processes_on_one_port_when_calls_arrive_then_both_serve_and_neither_sweeps_or_recovers_the_others_calls(
        siblings, inbound_sim, number_with_app, owner_conn):
    first, second = siblings
    assert first.server.address == second.server.address
    port = first.server.address[1]
    _, number, _ = number_with_app(app_json=[{"verb": "pause", "length": 30}])
    calls = [place_call(Call(callee=number).hangup_after(6), ("127.0.0.1", port))
             for _ in range(CALLS)]
    live = lambda: set(first.services.live_calls) | set(second.services.live_calls)  # noqa: E731
    eventually(lambda: {c.uuid for c in calls} <= live(), timeout=15)
    assert first.services.live_calls and second.services.live_calls, "the kernel spread the calls"
    for call in calls:
        _as_in_socket_app(inbound_sim, call.uuid, port)
    orphan = _as_in_socket_app(inbound_sim, "11111111-2222-4333-8444-555555555555", port)
    eventually(lambda: all(ctl.siblings.others() for ctl in siblings), timeout=15)  # both published
    # every call is a recovery candidate: call.started in the outbox, no record yet
    eventually(lambda: _started(owner_conn) >= {c.uuid for c in calls}, timeout=15)

    swept = [ctl.sweepers[0].sweep() for ctl in siblings]
    for ctl in siblings:
        ctl.recover_lost_calls()

    assert swept[0] == [orphan.uuid] or swept[1] == [orphan.uuid], "a real orphan is still swept"
    assert {c.uuid for c in calls} <= live(), "no sibling's call was hung up"
    assert all(c.uuid in inbound_sim.channels for c in calls)
    for call in calls:
        assert call.wait(15)
    for call in calls:
        eventually(lambda: call_record(owner_conn, call.uuid) is not None, timeout=15)
        record = call_record(owner_conn, call.uuid)
        assert record["status"] == "completed" and record["hangup_reason"] != "connection_lost"
    eventually(lambda: orphan.uuid not in inbound_sim.channels, timeout=15)


def test_given_one_process_when_started_then_nothing_is_published_for_siblings(
        inbound_sim, amqp_vhost, tmp_path, monkeypatch):
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    ctl = Controller(RuntimeConfig({"controller.listen": {"host": "127.0.0.1", "port": 0},
                                    "health.controller_port": 0}))
    assert ctl.siblings is None and ctl.processes == 1
