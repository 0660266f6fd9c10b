"""The carrier that answered a ``dial`` to a phone number is on the call record and in
``call.ended`` (issue 9 item 7): the routed legs export it to the caller's leg when they answer
(``bridge_export_vars``, as FreeSWITCH does), tagged with the dial's own id so an earlier dial's
carrier is never credited to a later one."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from app.routing.cache import RoutingCache
from app.routing.dialer import LcrDialer
from app.voice.session import CallSession
from tests.session.conftest import call_record, executed
from tests.session.routing_seed import GERMAN_NUMBER, two_carrier_plan
from tests.simulator import Call
from tests.verbs.directory_fake import DirectoryContact

PHONE = {"type": "phone", "name": "+" + GERMAN_NUMBER}


@pytest.fixture
def routed_controller(outbound_server, services):
    services.routing = RoutingCache()
    services.dialer = LcrDialer(services.routing)
    return outbound_server(lambda conn: CallSession(conn, services).run())


def _backup_carrier(owner_conn, gateway_id: uuid.UUID) -> uuid.UUID:
    return owner_conn.execute(text("SELECT carrier_id FROM gateways WHERE id = :g"),
                              {"g": gateway_id}).scalar_one()


def _call_ended(owner_conn, trace_id) -> dict:
    return owner_conn.execute(text(
        "SELECT body->'payload' FROM event_outbox WHERE routing_key = 'call.ended' "
        "AND body->>'trace_id' = :t"), {"t": str(trace_id)}).scalar_one()


def test_given_first_carrier_fails_over_when_second_answers_the_dial_then_record_and_call_ended_name_it(
        routed_controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "dial", "target": [PHONE]}])
    _, _, backup_gw = two_carrier_plan(account.id)
    call = simulate_call(Call(callee=number).bridge_answers(talk=0.05, leg=1), routed_controller)
    assert call.wait(10)

    bridge = next(arg for app, arg in executed(call) if app == "bridge")
    assert "bridge_export_vars=sbc_dial_id\\,lcr_carrier_id\\,lcr_gateway_id" in bridge
    record = call_record(owner_conn, call.uuid)
    backup = _backup_carrier(owner_conn, backup_gw)
    assert (record["dial_carrier_id"], record["dial_gateway_id"]) == (backup, backup_gw)
    ended = _call_ended(owner_conn, record["trace_id"])
    assert (ended["dialCarrierId"], ended["dialGatewayId"]) == (str(backup), str(backup_gw))


def test_given_dial_to_a_user_only_when_answered_then_no_dial_carrier_is_recorded(
        routed_controller, services, simulate_call, number_with_app, owner_conn):
    services.contact = DirectoryContact("bob")  # bob is a user of the account's directory
    _, number, _ = number_with_app(app_json=[{"verb": "dial", "target": [{"type": "user", "name": "bob"}]}])
    call = simulate_call(Call(callee=number).bridge_answers(talk=0.02), routed_controller)
    assert call.wait(10)
    assert [arg for app, arg in executed(call) if app == "bridge"][0].endswith("user/bob@acme")
    record = call_record(owner_conn, call.uuid)
    assert record["dial_carrier_id"] is None and record["dial_gateway_id"] is None


def test_given_caller_hangs_up_during_the_bridge_when_recorded_then_the_answering_carrier_is_kept(
        routed_controller, simulate_call, number_with_app, owner_conn):
    """The usual end of a dialled call: the bridge never completes normally, so the carrier is
    taken from CHANNEL_BRIDGE, not from the bridge's completion."""
    account, number, _ = number_with_app(app_json=[{"verb": "dial", "target": [PHONE]}])
    cheap, cheap_gw, _ = two_carrier_plan(account.id)
    call = simulate_call(Call(callee=number).bridge_answers(talk=5.0).hangup_after(0.5), routed_controller)
    assert call.wait(10)
    record = call_record(owner_conn, call.uuid)
    assert (record["dial_carrier_id"], record["dial_gateway_id"]) == (cheap, cheap_gw)
