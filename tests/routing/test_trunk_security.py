"""Trunks on the internet, compiled: a gateway's transport and registration in the generated
sofia gateway, a carrier's SRTP policy on the legs it is dialled with (issue 25)."""
from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET

from sqlalchemy.orm import Session

from app.crypto import encrypt_secret
from app.models import Carrier, Gateway
from app.routing.acl import CarrierIdentifier, build_acl
from app.routing.fsconfig import diff_gateways, render_gateway, render_gateways
from app.routing.lcr import bridge_string, compile_table
from app.routing.loader import read_rows
from app.routing.rows import (
    AccountRow,
    CarrierEntryRow,
    CarrierRow,
    GatewayRow,
    PlanRow,
    RouteRow,
    RoutingRows,
)
from app.routing.srtp import leg_value

CARRIER = uuid.UUID(int=1)


def _params(gw: GatewayRow) -> dict[str, str]:
    block = ET.fromstring(render_gateway(gw))
    return {p.get("name"): p.get("value") for p in block.iter("param")}


def _registering(password: str = "s3cret&<'\"") -> GatewayRow:
    return GatewayRow(uuid.UUID(int=2), CARRIER, "", transport="tls", outbound=True, inbound=False,
                      host="sip.carrier.example", port=5061, register=True, register_username="acct42",
                      register_password=password, register_realm="carrier.example",
                      register_expiry=300, register_retry=15)


def test_given_a_tls_gateway_when_rendered_then_calls_and_registrations_use_tls():
    params = _params(GatewayRow(uuid.UUID(int=3), CARRIER, "203.0.113.5", port=5061, transport="tls"))
    assert params["register-transport"] == "tls"
    assert params["proxy"] == "203.0.113.5:5061" and params["register"] == "false"
    assert "password" not in params


def test_given_a_registering_gateway_when_rendered_then_credentials_expiry_and_retry_are_sofias():
    params = _params(_registering())
    assert (params["register"], params["username"], params["realm"]) == ("true", "acct42", "carrier.example")
    assert params["password"] == "s3cret&<'\""  # XML-escaped in the file, intact once parsed
    assert (params["expire-seconds"], params["retry-seconds"]) == ("300", "15")
    assert params["extension"] == "auto_to_user"  # a call to the registration dials its To user


def test_given_a_registering_gateway_then_its_password_is_in_no_repr():
    assert "s3cret" not in repr(_registering())


def test_given_a_changed_password_when_diffed_then_the_gateway_is_killed_and_rescanned():
    before = render_gateways([_registering("old-pass")])
    after = render_gateways([_registering("new-pass")])
    diff = diff_gateways(before, after)
    assert diff.to_kill == (diff.changed[0],) and diff.added == () and diff.removed == ()


def _table(srtp: str):
    plan, route = uuid.UUID(int=10), uuid.UUID(int=11)
    rows = RoutingRows(
        carriers=(CarrierRow(CARRIER, "Secure", srtp=srtp),),
        gateways=(GatewayRow(uuid.UUID(int=2), CARRIER, "203.0.113.5", transport="tls", outbound=True),),
        plans=(PlanRow(plan, "p"),), routes=(RouteRow(route, plan, r"^1\d+"),),
        entries=(CarrierEntryRow(uuid.UUID(int=12), route, CARRIER),),
        accounts=(AccountRow(uuid.UUID(int=13)),))
    return compile_table(rows)


def test_given_a_mandatory_srtp_carrier_when_dialled_then_its_leg_offers_only_sdes_srtp():
    dial = bridge_string(_table("mandatory").explain("15550100", None))
    assert "rtp_secure_media_outbound=mandatory:AES_CM_128_HMAC_SHA1_80:AES_CM_128_HMAC_SHA1_32" in dial


def test_given_each_srtp_mode_then_the_leg_value_is_freeswitchs():
    assert leg_value("off") == "forbidden"
    assert leg_value("optional") == "optional:AES_CM_128_HMAC_SHA1_80:AES_CM_128_HMAC_SHA1_32"
    assert "rtp_secure_media_outbound=forbidden" in bridge_string(_table("off").explain("15550100", None))


def test_given_an_outbound_only_registering_gateway_then_its_address_is_admitted_but_names_no_carrier():
    registrar = GatewayRow(uuid.UUID(int=5), CARRIER, "203.0.113.9", inbound=False, outbound=True, register=True,
                           register_username="u", register_password="p")
    entries, rejected = build_acl([registrar], [CarrierRow(CARRIER, "Registrar")])
    assert [str(e.network) for e in entries] == ["203.0.113.9/32"] and rejected == []
    assert CarrierIdentifier(entries).identify("203.0.113.9") is None


def test_given_a_password_encrypted_with_another_key_when_routing_loads_then_only_that_gateway_loses_it(
        owner_engine, caplog):
    carrier_id, good, stale = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    with Session(owner_engine) as db, db.begin():
        db.add(Carrier(id=carrier_id, account_id=None, name=f"reg-{carrier_id.hex[:6]}"))
        db.flush()
        for gateway_id, ip, token in ((good, "198.51.100.71", encrypt_secret("right")),
                                      (stale, "198.51.100.72", encrypt_secret("old", secret_key="another-key"))):
            db.add(Gateway(id=gateway_id, account_id=None, carrier_id=carrier_id, ipv4=ip, inbound=False,
                           register=True, register_username="u", register_password_encrypted=token))
    try:
        with Session(owner_engine) as db:
            rows = {g.id: g for g in read_rows(db).gateways}
        assert (rows[good].register_password, rows[stale].register_password) == ("right", None)
        assert f"gateway {stale}: its register_password cannot be decrypted" in caplog.text
    finally:
        with Session(owner_engine) as db, db.begin():
            db.query(Carrier).filter(Carrier.id == carrier_id).delete()
