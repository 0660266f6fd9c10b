"""A controller SIGKILLed mid-call: the next controller records the calls it left behind
(call record with connection_lost, usage, call.failed, call.ended; limiter slot freed).
Real ``sbc controller`` process, the FreeSWITCH simulator, real PostgreSQL/Redis/RabbitMQ."""
from __future__ import annotations

import signal
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from app.calls.limiter import ConcurrencyLimiter
from app.calls.recovery import lost_controller_ended_by, recover_lost_calls
from app.config import RuntimeConfig
from app.events import payloads
from app.events.exchanges import CALL_EVENTS, SYSTEM_EVENTS
from app.events.outbox import publish
from app.voice.controller import Controller
from tests.faults.processes import cluster_config, free_port, listening, start_sbc, stop, wait_for
from tests.session.conftest import call_record
from tests.simulator import Call, place_call

SAY_THEN_WAIT = [{"verb": "say", "text": "hello"}, {"verb": "pause", "length": 60}]


def _events(owner_conn, call_id: str) -> list[str]:
    return [r[0] for r in owner_conn.execute(text(
        "SELECT routing_key FROM event_outbox WHERE body->'payload'->>'callId' = :c "
        "ORDER BY created_at, id"), {"c": call_id})]


@pytest.fixture
def crashed_controller(inbound_sim, amqp_vhost, tmp_path):
    """``crash(call_scenario_factory)``: a real ``sbc controller`` takes the call, is SIGKILLed
    once the call is answered (and held/resumed), and the SimOutboundCall is returned."""
    port = free_port()
    host, esl_port = inbound_sim.address
    procs = []

    def crash(number: str) -> object:
        proc = start_sbc("controller", log_path=tmp_path / "controller.log",
                         env={"SBC_FS_GENERATED_DIR": str(tmp_path)})
        procs.append(proc)
        wait_for(lambda: listening(port), 60, "controller listening")
        call = place_call(Call(callee=number).hold(at=0.3, duration=0.4), ("127.0.0.1", port))
        return proc, call

    with cluster_config({"freeswitch.nodes": [{"host": host, "port": esl_port, "password": "ClueCon"}],
                         "controller.listen": {"host": "127.0.0.1", "port": port},
                         "health.controller_port": 0}):  # no ops listener: 8085 may be taken
        yield crash
        for proc in procs:
            stop(proc)


@pytest.fixture
def next_controller(inbound_sim, amqp_vhost, tmp_path, monkeypatch):
    monkeypatch.setenv("SBC_FS_GENERATED_DIR", str(tmp_path))
    host, port = inbound_sim.address
    started = []

    def start() -> Controller:
        ctl = Controller(RuntimeConfig({
            "freeswitch.nodes": [{"host": host, "port": port, "password": "ClueCon"}],
            "controller.listen": {"host": "127.0.0.1", "port": 0}, "health.controller_port": 0}))
        ctl.start()
        started.append(ctl)
        return ctl

    yield start
    for ctl in started:
        ctl.stop()


def _kill_when_answered_and_resumed(proc, call, owner_conn) -> datetime:
    wait_for(lambda: {"call.answered", "call.resumed"} <= set(_events(owner_conn, call.uuid)),
             20, "call answered, held and resumed")
    time.sleep(0.5)  # scenario: some talk time after the last event
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    return datetime.now(timezone.utc)


def test_given_a_controller_killed_mid_call_when_the_next_one_starts_then_the_call_is_recorded_and_billed(
        crashed_controller, next_controller, number_with_app, owner_conn, redis_client):
    account, number, app_id = number_with_app(app_json=SAY_THEN_WAIT)
    proc, call = crashed_controller(number)
    killed = _kill_when_answered_and_resumed(proc, call, owner_conn)
    assert call_record(owner_conn, call.uuid) is None
    limiter = ConcurrencyLimiter(redis_client)
    assert limiter.counts(account.id)[0] == 1, "the dead controller's slot is still held"

    killed_at = time.monotonic()
    ctl = next_controller()
    recovered = wait_for(lambda: call_record(owner_conn, call.uuid), 20, "lost call recorded")
    print(f"\ncontroller start -> lost call recorded in {time.monotonic() - killed_at:.2f}s")
    record = call_record(owner_conn, call.uuid)
    assert record["status"] == "completed"
    assert record["hangup_reason"] == "connection_lost" and record["webhook_error"] == "connection_lost"
    assert record["application_id"] == app_id and record["to_number"] == number
    # the simulator, like FreeSWITCH, ended the call when its socket dropped: billed until the
    # next controller started (an upper bound off by the restart time), not just the last event
    assert record["answered_at"] is not None
    assert killed - timedelta(seconds=0.2) <= record["ended_at"] <= killed + timedelta(seconds=5)
    assert record["talk_ms"] >= (killed - record["answered_at"]).total_seconds() * 1000 - 200
    assert _events(owner_conn, call.uuid)[-2:] == ["call.failed", "call.ended"]
    summary = owner_conn.execute(text("SELECT hold_count FROM interaction_summary WHERE trace_id = :t"),
                                 {"t": record["trace_id"]}).scalar()
    assert summary == 1
    # right after the record's commit, in the recovery greenlet: seen within a second here (the
    # record can be read before that greenlet is scheduled again), not the slot's expiry
    wait_for(lambda: limiter.counts(account.id)[0] == 0, 1, "the lost call's slot freed at once")
    assert recovered < 20 and not ctl.services.live_calls


def test_given_a_lost_calls_channel_still_on_the_switch_when_recovered_then_it_is_hung_up_and_recorded(
        crashed_controller, next_controller, number_with_app, owner_conn, inbound_sim):
    account, number, _ = number_with_app(app_json=SAY_THEN_WAIT)
    proc, call = crashed_controller(number)
    _kill_when_answered_and_resumed(proc, call, owner_conn)
    # FreeSWITCH kept the channel (e.g. it had not noticed the socket drop yet)
    inbound_sim.add_channel(uuid=call.uuid, callee=number)
    time.sleep(1.0)  # scenario: the orphan stays up on the switch a while (its talk, asserted below)

    next_controller()
    wait_for(lambda: call_record(owner_conn, call.uuid), 20, "lost call recorded")
    assert call.uuid not in inbound_sim.channels, "the orphan channel was not hung up"
    record = call_record(owner_conn, call.uuid)
    assert record["webhook_error"] == "connection_lost"
    assert record["talk_ms"] >= 1500, "recorded until it was hung up, from FreeSWITCH's view"


def _started(account, number: str) -> str:
    call_id = str(uuid.uuid4())
    publish(CALL_EVENTS, "call.started", payloads.call_started(
        call_id, direction="inbound", from_number="15551230000", to_number=number),
        account_id=account.id, trace_id=uuid.uuid4())
    return call_id


def test_given_an_unrecorded_call_live_here_or_on_another_controller_when_recovering_then_it_is_left_alone(
        make_account, owner_conn):
    account = make_account()
    live, elsewhere, ours = (_started(account, "4930111") for _ in range(3))
    killed = []
    rows = [({"uuid": elsewhere, "application": "socket",
              "application_data": "10.0.0.9:8084 async full"}, killed.append),
            ({"uuid": ours, "application": "socket",
              "application_data": "127.0.0.1:8084 async full"}, killed.append)]
    written = recover_lost_calls({live}, rows, our_socket="127.0.0.1:8084")
    assert killed == [ours]
    assert call_record(owner_conn, live) is None and call_record(owner_conn, elsewhere) is None
    assert call_record(owner_conn, ours)["webhook_error"] == "connection_lost"
    assert recover_lost_calls({live}, rows, our_socket="127.0.0.1:8084") == [], "recorded once"
    assert len(written) == 1


def test_given_a_controller_dead_long_before_this_one_started_then_its_calls_end_one_heartbeat_after_its_last(
        owner_conn):
    # this run's other controllers (earlier tests) are gone too: only the one below is left
    owner_conn.execute(text("DELETE FROM event_outbox WHERE routing_key LIKE 'system.service.%' "
                            "AND body->'payload'->>'service' = 'controller'"))
    owner_conn.commit()
    beat = datetime.now(timezone.utc) - timedelta(hours=1)
    gone = f"controller-test-{uuid.uuid4().hex[:8]}"
    row = publish(SYSTEM_EVENTS, "system.service.heartbeat", payloads.service_state(
        "controller", gone, host="h", pid=1, version="0", started_at=beat))
    owner_conn.execute(text("UPDATE event_outbox SET created_at = :t WHERE id = :i"), {"t": beat, "i": row})
    owner_conn.commit()
    now = datetime.now(timezone.utc)
    assert lost_controller_ended_by("controller-me", now, 30) == beat + timedelta(seconds=30)
    assert lost_controller_ended_by(gone, now, 30) <= now, "its own heartbeats do not count"


def test_given_a_call_lost_by_another_controller_when_the_switch_link_comes_back_then_it_is_recorded(
        next_controller, inbound_sim, make_account, owner_conn):
    ctl = next_controller()
    wait_for(lambda: ctl.nodes[0].connected, 10, "switch connected")
    wait_for(lambda: "api show channels as json" in inbound_sim.commands and not ctl._recovering.locked(),
             10, "the first recovery ran (and found nothing)")
    call_id = _started(make_account(), "4930222")
    assert call_record(owner_conn, call_id) is None
    inbound_sim.drop_connections()
    wait_for(lambda: call_record(owner_conn, call_id), 20, "recorded after the reconnect")
    assert ctl.nodes[0].reconnects >= 1
    assert call_record(owner_conn, call_id)["webhook_error"] == "connection_lost"
