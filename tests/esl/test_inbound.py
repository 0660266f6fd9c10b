"""InboundConnection against the simulated inbound event socket over real TCP."""
from __future__ import annotations

import gevent
import pytest

from esl.errors import AuthenticationFailed, ConnectionLost
from esl.inbound import InboundConnection, parse_channels_json
from esl.protocol import build_event_command
from tests.plugins.eventually import eventually


def _connect(sim, **kw) -> InboundConnection:
    host, port = sim.address
    conn = InboundConnection(host, port, "ClueCon", backoff_initial=0.05, backoff_max=0.2, **kw)
    conn.connect()
    return conn


def test_given_right_password_when_connecting_then_authenticated_and_subscribed(inbound_sim):
    conn = _connect(inbound_sim, events=["CHANNEL_HANGUP_COMPLETE", "sofia::gateway_state"])
    try:
        assert conn.connected
        assert inbound_sim.commands[:2] == [
            "auth ClueCon", "event plain CHANNEL_HANGUP_COMPLETE BACKGROUND_JOB CUSTOM sofia::gateway_state"]
    finally:
        conn.close()


def test_given_wrong_password_when_connecting_then_authentication_failed(inbound_sim):
    host, port = inbound_sim.address
    conn = InboundConnection(host, port, "wrong", reconnect=False)
    with pytest.raises(AuthenticationFailed):
        conn.connect()


def test_given_api_commands_when_called_then_bodies_match_freeswitch_replies(inbound_sim):
    conn = _connect(inbound_sim)
    try:
        assert conn.api("reloadacl") == "+OK acl reloaded\n"
        assert conn.api("uuid_kill 00000000-0000-0000-0000-000000000000") == "-ERR No such channel!\n"
        assert conn.api("nosuchcommand foo") == "-ERR nosuchcommand Command not found!\n"
        assert conn.show_channels() == []
        ch = inbound_sim.add_channel()
        rows = conn.show_channels()
        assert [r["uuid"] for r in rows] == [ch.uuid]
    finally:
        conn.close()


def test_given_bgapi_when_job_completes_then_result_comes_from_its_background_job(inbound_sim):
    conn = _connect(inbound_sim)
    try:
        uid = "175db7f9-ee6d-40db-889b-4de26195cd3a"
        job = conn.bgapi(f"originate {{origination_uuid={uid}}}sofia/internal/1001@127.0.0.1:5090 &park()")
        assert job.result(timeout=5) == f"+OK {uid}\n"
        assert job.ok
        assert job.event.get("Job-Command") == "originate"
        inbound_sim.originate_fails = "NORMAL_TEMPORARY_FAILURE"
        failed = conn.bgapi("originate sofia/internal/1002@127.0.0.1:5099 &park()")
        assert failed.result(timeout=5) == "-ERR NORMAL_TEMPORARY_FAILURE\n"
        assert not failed.ok
    finally:
        conn.close()


def test_given_custom_subscription_when_gateway_changes_then_handler_gets_it_by_subclass(inbound_sim):
    conn = _connect(inbound_sim, events=["sofia::gateway_state"])
    seen = []
    conn.on("sofia::gateway_state", lambda ev: seen.append((ev.get("Gateway"), ev.get("Ping-Status"))))
    try:
        inbound_sim.gateways["gw1"] = True
        inbound_sim.set_gateway("gw1", False)
        inbound_sim.set_gateway("gw1", True)
        eventually(lambda: len(seen) == 2, timeout=5, what="both gateway_state events")
        assert seen == [("gw1", "DOWN"), ("gw1", "UP")]
    finally:
        conn.close()


def test_given_filter_when_events_for_other_channels_then_only_matching_ones_arrive(inbound_sim):
    conn = _connect(inbound_sim, events=["CHANNEL_HOLD"])
    held = []
    conn.on("CHANNEL_HOLD", lambda ev: held.append(ev.unique_id))
    try:
        a = inbound_sim.add_channel()
        b = inbound_sim.add_channel()
        assert conn.filter("Unique-ID", a.uuid) == f"+OK filter added. [Unique-ID]=[{a.uuid}]"
        inbound_sim.hold(b.uuid)
        inbound_sim.hold(a.uuid)
        # b was held first: on the one ordered socket its event, if wrongly let through, comes
        # before a's, so waiting for a's is enough to see it
        eventually(lambda: a.uuid in held, timeout=5, what="the filtered channel's CHANNEL_HOLD")
        assert held == [a.uuid]
    finally:
        conn.close()


def test_given_connection_dropped_when_switch_returns_then_reconnects_resubscribes_and_reconciles(inbound_sim):
    reconciled = []
    conn = _connect(inbound_sim, events=["CHANNEL_HANGUP_COMPLETE"], on_reconcile=reconciled.append)
    try:
        ch = inbound_sim.add_channel()
        inbound_sim.drop_connections()
        eventually(lambda: reconciled, timeout=5, what="reconcile after the reconnect")
        assert conn.reconnects == 1
        assert [row["uuid"] for row in reconciled[0]] == [ch.uuid]
        assert inbound_sim.commands.count("event plain CHANNEL_HANGUP_COMPLETE BACKGROUND_JOB") == 2
        # events flow again on the new socket
        done = []
        conn.on("CHANNEL_HANGUP_COMPLETE", lambda ev: done.append(ev.unique_id))
        inbound_sim.hangup_channel(ch.uuid)
        eventually(lambda: done, timeout=5, what="CHANNEL_HANGUP_COMPLETE on the new socket")
        assert done == [ch.uuid]
    finally:
        conn.close()


def test_given_pending_bgapi_when_connection_drops_then_job_fails_at_once(inbound_sim):
    conn = _connect(inbound_sim)
    try:
        inbound_sim.bgapi_delay = 30
        job = conn.bgapi("originate sofia/internal/1001@127.0.0.1 &park()")
        inbound_sim.drop_connections()
        with pytest.raises(ConnectionLost):
            job.result(timeout=10)
    finally:
        conn.close()


def test_given_show_channels_bodies_when_parsed_then_both_empty_forms_give_no_rows():
    assert parse_channels_json('{"row_count": 0}\n') == []
    assert parse_channels_json('{"row_count":1,"rows":[{"uuid":"u1"}]}') == [{"uuid": "u1"}]


def test_given_custom_subclasses_when_building_event_command_then_they_follow_custom():
    assert build_event_command(["CHANNEL_HOLD", "conference::maintenance", "CUSTOM", "BACKGROUND_JOB"]) == \
        "event plain CHANNEL_HOLD BACKGROUND_JOB CUSTOM conference::maintenance"


def test_given_switch_refuses_for_a_while_when_it_comes_back_then_reconnect_backs_off_and_recovers(inbound_sim):
    reconciled = []
    conn = _connect(inbound_sim, on_reconcile=reconciled.append)
    try:
        inbound_sim.refuse_connections = True
        inbound_sim.drop_connections()
        gevent.sleep(0.5)  # scenario: the switch refuses for 0.5 s, several 0.05-0.2 s backoffs
        assert not conn.connected
        assert conn.reconnects == 0
        inbound_sim.refuse_connections = False
        eventually(lambda: reconciled, timeout=5, what="reconcile once the switch accepts again")
        assert conn.connected and conn.reconnects == 1
        assert reconciled == [[]]  # '{"row_count": 0}\n' parsed as no rows
        assert conn.api("reloadacl") == "+OK acl reloaded\n"
    finally:
        conn.close()
