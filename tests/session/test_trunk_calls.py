"""Trunk calls through the session with routing on: carrier identification from the source IP
(tenant-scoped) and least-cost routing of a ``dial`` phone target into one bridge string."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from app.crypto import encrypt_secret
from app.db.engine import tenant_session
from app.models import Carrier, Gateway, Lcr, LcrCarrierSetEntry, LcrRoute
from app.routing.cache import RoutingCache
from app.routing.dialer import LcrDialer
from app.routing.lcr import gateway_name
from app.voice.session import CallSession
from tests.session.conftest import call_record, executed, hangups
from tests.simulator import Call


@pytest.fixture
def routed_controller(outbound_server, services):
    services.routing = RoutingCache()
    services.dialer = LcrDialer(services.routing)
    return outbound_server(lambda conn: CallSession(conn, services).run())


def _carrier(account_id, name: str, ip: str, *, netmask: int = 32, srtp: str = "off",
             **gateway_fields) -> tuple[uuid.UUID, uuid.UUID]:
    with tenant_session(account_id) as session:
        carrier = Carrier(account_id=account_id, name=name, srtp=srtp)
        session.add(carrier)
        session.flush()
        gateway = Gateway(account_id=account_id, carrier_id=carrier.id, ipv4=ip, netmask=netmask, **gateway_fields)
        session.add(gateway)
        session.flush()
        return carrier.id, gateway.id


def _trunk_call(number: str, source_ip: str) -> Call:
    return Call(callee=number, variables={"sofia_profile_name": "external", "sip_network_ip": source_ip})


def test_given_call_from_accounts_gateway_when_it_arrives_then_carrier_is_on_the_call_record(
        routed_controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    carrier_id, gateway_id = _carrier(account.id, "Carrier A", "203.0.113.0", netmask=24)
    call = simulate_call(_trunk_call(number, "203.0.113.77"), routed_controller)
    assert call.wait(10)
    record = call_record(owner_conn, call.uuid)
    assert (record["carrier_id"], record["gateway_id"]) == (carrier_id, gateway_id)
    assert record["status"] == "completed"


def test_given_call_from_another_tenants_trunk_when_it_arrives_then_it_is_rejected_unanswered(
        routed_controller, simulate_call, number_with_app, make_account, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    other = make_account()
    _carrier(other.id, "Other tenant's trunk", "198.51.100.10")
    call = simulate_call(_trunk_call(number, "198.51.100.10"), routed_controller)
    assert call.wait(10)
    assert executed(call) == []
    assert hangups(call) == ["CALL_REJECTED"]
    assert call_record(owner_conn, call.uuid)["status"] == "refused"


def test_given_lcr_plan_when_dialing_a_phone_target_then_bridge_tries_carriers_in_order(
        routed_controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[
        {"verb": "dial", "target": [{"type": "phone", "name": "+4915112345678"}], "timeout": 20}])
    first_carrier, first_gw = _carrier(account.id, "Cheap", "192.0.2.10")
    second_carrier, second_gw = _carrier(account.id, "Backup", "192.0.2.20")
    with tenant_session(account.id) as session:
        plan = Lcr(account_id=account.id, name="Germany")
        session.add(plan)
        session.flush()
        route = LcrRoute(account_id=account.id, lcr_id=plan.id, regex="^49", priority=1)
        session.add(route)
        session.flush()
        session.add_all([
            LcrCarrierSetEntry(account_id=account.id, lcr_route_id=route.id, carrier_id=second_carrier,
                               priority=2, workload=100),
            LcrCarrierSetEntry(account_id=account.id, lcr_route_id=route.id, carrier_id=first_carrier,
                               priority=1, workload=100),
        ])
    call = simulate_call(Call(callee=number).bridge_answers(talk=0.05), routed_controller)
    assert call.wait(10)
    bridge = next(arg for app, arg in executed(call) if app == "bridge")
    first = bridge.index(f"sofia/gateway/{gateway_name(first_gw)}/4915112345678")
    second = bridge.index(f"sofia/gateway/{gateway_name(second_gw)}/4915112345678")
    assert first < second and "|" in bridge[first:second]
    assert "call_timeout=20" in bridge
    assert call_record(owner_conn, call.uuid)["status"] == "completed"


def test_given_an_srtp_mandatory_carrier_when_it_offers_plain_rtp_then_refused_488_with_the_cause_on_the_record(
        routed_controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    _carrier(account.id, "Secure only", "203.0.113.40", srtp="mandatory")
    call = simulate_call(_trunk_call(number, "203.0.113.40"), routed_controller)
    assert call.wait(10)
    assert executed(call) == []
    assert hangups(call) == ["INCOMPATIBLE_DESTINATION"]
    record = call_record(owner_conn, call.uuid)
    assert (record["status"], record["hangup_cause"]) == ("refused", "INCOMPATIBLE_DESTINATION")


def test_given_an_srtp_mandatory_carrier_when_it_offers_sdes_then_the_call_runs(
        routed_controller, simulate_call, number_with_app, owner_conn):
    account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    _carrier(account.id, "Secure only", "203.0.113.41", srtp="mandatory")
    secure = Call(callee=number, variables={"sofia_profile_name": "external", "sip_network_ip": "203.0.113.41",
                                            "rtp_has_crypto": "AES_CM_128_HMAC_SHA1_80"})
    call = simulate_call(secure, routed_controller)
    assert call.wait(10)
    assert call_record(owner_conn, call.uuid)["status"] == "completed"


def test_given_a_call_through_our_registration_when_it_arrives_then_it_is_tied_to_the_registering_carrier(
        routed_controller, simulate_call, number_with_app, owner_conn):
    """The registrar's address is also another carrier's inbound network: sofia's
    sip_gateway_name (the registration the carrier called) wins over the address."""
    account, number, _ = number_with_app(app_json=[{"verb": "say", "text": "hi"}])
    _carrier(account.id, "By address", "203.0.113.0", netmask=24)
    carrier_id, gateway_id = _carrier(
        account.id, "Registrar", "203.0.113.50", inbound=False, register=True, register_username="acct42",
        register_password_encrypted=encrypt_secret("pw"))
    via_registration = Call(callee=number, variables={
        "sofia_profile_name": "external", "sip_network_ip": "203.0.113.50",
        "sip_gateway_name": gateway_name(gateway_id)})
    call = simulate_call(via_registration, routed_controller)
    assert call.wait(10)
    record = call_record(owner_conn, call.uuid)
    assert (record["carrier_id"], record["gateway_id"], record["status"]) == (carrier_id, gateway_id, "completed")


def test_given_carrier_sends_internal_looking_x_headers_naming_another_tenant_when_it_arrives_then_they_do_not_route(
        routed_controller, simulate_call, number_with_app, owner_conn):
    """A carrier's ``X-`` headers reach the session as ``sip_h_X-*`` variables (FreeSWITCH's
    mapping). Naming another tenant's account, application and number in them changes nothing:
    the number dialled and the source address decide (issue 25, header hygiene)."""
    account, number, app_id = number_with_app(app_json=[{"verb": "say", "text": "ours"}])
    other, other_number, other_app = number_with_app(app_json=[{"verb": "say", "text": "theirs"}])
    carrier_id, gateway_id = _carrier(account.id, "Carrier A", "203.0.113.0", netmask=24)
    _carrier(other.id, "Other tenant's trunk", "198.51.100.10")
    forged = {"sip_h_X-SBC-Account-Sid": str(other.id), "sip_h_X-SBC-Application-Sid": str(other_app),
              "sip_h_X-SBC-Carrier-Id": "198.51.100.10", "sip_h_X-Original-To": other_number,
              "sip_h_X-SBC-Agent-Domain": "other"}
    call = Call(callee=number, variables={"sofia_profile_name": "external", "sip_network_ip": "203.0.113.77",
                                          **forged})
    sim = simulate_call(call, routed_controller)
    assert sim.wait(10)
    record = call_record(owner_conn, sim.uuid)
    assert (record["account_id"], record["application_id"]) == (account.id, app_id)
    assert (record["carrier_id"], record["gateway_id"], record["status"]) == (carrier_id, gateway_id, "completed")
    spoken = " ".join(data for _, data in executed(sim))
    assert "ours" in spoken and "theirs" not in spoken
    assert owner_conn.execute(text("SELECT count(*) FROM call_records WHERE account_id = :a"),
                              {"a": other.id}).scalar() == 0
