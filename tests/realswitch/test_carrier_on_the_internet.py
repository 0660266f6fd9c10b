"""Trunks on the internet (issue 25) against a second FreeSWITCH playing the carrier
(carrier.py): the product registers to it over TLS, calls it over TLS with SDES SRTP, a
plaintext offer to it is refused, a wrong password leaves the registration in FAIL_WAIT. A
tshark capture of the carrier's ports shows the TLS handshake and only SRTP on the wire.

Everything on the product side is provisioned through the API; the carrier's certificate is
signed by the run's development CA, which is the product's cafile.pem (a private CA)."""
from __future__ import annotations

import json
import math
import uuid
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest

from app.routing.lcr import gateway_name
from tests.plugins.eventually import eventually
from tests.plugins.skips import skip_or_fail_in_ci
from tests.realswitch import outbound
from tests.realswitch.carrier import DOMAIN, USER, CarrierSwitch
from tests.realswitch.freeswitch import SwitchPorts, freeswitch_tree
from tests.realswitch.rtp_capture import RtpCapture, rtp_payloads, tshark_available

CARRIER_PASSWORD = "carrier-" + uuid.uuid4().hex[:12]
REGISTER_WAIT_SECONDS = 30.0
# sofia gives up on a REGISTER whose TLS connection never comes up after its transaction
# timer (SIP timer F, 32 s), then waits register_retry
UNTRUSTED_WAIT_SECONDS = 60.0
# AES_CM_128_HMAC_SHA1_80 appends a 10-byte authentication tag to every RTP payload; a plain
# G.711 payload is whole 10 ms blocks (80 bytes: 160 for 20 ms, 240 for the 30 ms the switch
# sends at the start of a bridge)
SRTP_AUTH_TAG_BYTES = 10
G711_BLOCK_BYTES = 80
G711_FRAME_BYTES = 160
# Shannon entropy of the payload bytes: ciphertext is ~8 bits a byte; G.711 speech and tones
# use far fewer byte values (g711a.pcap: measured below)
CIPHERTEXT_MIN_BITS_PER_BYTE = 7.9
PLAYED_PCAP = Path("/usr/share/sip-tester/g711a.pcap")  # what the caller streams (the scenario's)


@pytest.fixture(scope="module")
def carrier_switch(real_switch, realswitch_workdir: Path) -> Iterator[CarrierSwitch]:
    switch = CarrierSwitch(freeswitch_tree(), realswitch_workdir / "carrier-fs", SwitchPorts.pick(),
                           "carrier-esl", real_switch.ca_dir, CARRIER_PASSWORD)
    switch.start()
    try:
        yield switch
    finally:
        switch.stop()


def _secure_carrier(tenant, carrier_switch: CarrierSwitch, srtp: str, password: str) -> tuple[str, str]:
    """(carrier id, gateway id): TLS to the carrier's listener, registering as acct42."""
    with tenant.admin.product.routing_changes(2):
        carrier = tenant.admin.post("/api/carriers", {"name": f"secure-{srtp}", "srtp": srtp})
        gateway = tenant.admin.post(f"/api/carriers/{carrier['id']}/gateways", {
            "ipv4": "127.0.0.1", "port": carrier_switch.ports.tls_sip, "transport": "tls",
            "inbound": False, "outbound": True, "register": True, "register_username": USER,
            "register_password": password, "register_realm": DOMAIN, "register_retry": 5})
    return carrier["id"], gateway["id"]


def _gateway_state(switch, gateway_id: str) -> str:
    for line in outbound.gateway_status(switch, gateway_id).splitlines():
        if line.startswith("State"):
            return line.split()[1]
    return ""


def _channels(switch) -> list[dict]:
    return json.loads(switch.api("show channels as json") or "{}").get("rows") or []


def _variables(switch, uuid_: str, *names: str) -> dict[str, str]:
    return {n: switch.api(f"uuid_getvar {uuid_} {n}", check=False).strip() for n in names}


def _bits_per_byte(data: bytes) -> float:
    counts = Counter(data)
    return -sum(n / len(data) * math.log2(n / len(data)) for n in counts.values())


def test_the_product_registers_over_tls_and_calls_the_carrier_over_tls_with_srtp(
        product, routing_tenant, sipp, carrier_switch, owner_engine, realswitch_workdir):
    if reason := tshark_available():
        skip_or_fail_in_ci(reason)
    # everything the carrier's ports see, from before the registration's TLS handshake (the
    # INVITE reuses that connection) to the end of the call
    ports = carrier_switch.ports
    capture = RtpCapture(realswitch_workdir / "carrier-wire.pcap", ports.rtp_start, ports.rtp_end,
                         also_ports=(ports.tls_sip, ports.sip))
    try:
        media_ports = _registered_tls_srtp_call(product, routing_tenant, sipp, carrier_switch, owner_engine)
    finally:
        capture.stop()
    handshakes = capture.tls_handshakes(ports.tls_sip)
    assert (ports.tls_sip, 1) in [(dst, kind) for _, dst, kind in handshakes], handshakes  # our ClientHello
    assert (ports.tls_sip, 2) in [(src, kind) for src, _, kind in handshakes], handshakes  # its ServerHello
    wire = capture.path.read_bytes()
    assert b"INVITE sip:" not in wire and b"REGISTER sip:" not in wire and b"SIP/2.0" not in wire
    assert capture.frames_matching("sip") == 0
    # the call's stream between the product and the carrier (the caller's own leg to the
    # product is plain G.711, and other calls may share the loopback)
    audio = [payload for pt, payload in rtp_payloads(capture.path, between=media_ports) if pt in (0, 8)]
    assert {len(payload) % G711_BLOCK_BYTES for payload in audio} == {SRTP_AUTH_TAG_BYTES}
    # 4 s of the caller's speech to the carrier and of its tone back, 50 packets a second each way
    assert 300 <= len(audio) <= 480, len(audio)
    played = [payload for _, payload in rtp_payloads(PLAYED_PCAP)]
    assert _bits_per_byte(b"".join(played)) < CIPHERTEXT_MIN_BITS_PER_BYTE - 1  # the criterion tells them apart
    assert _bits_per_byte(b"".join(audio)) >= CIPHERTEXT_MIN_BITS_PER_BYTE
    assert not {payload[:G711_FRAME_BYTES] for payload in audio} & set(played)  # no played frame in clear


def _registered_tls_srtp_call(product, routing_tenant, sipp, carrier_switch, owner_engine) -> tuple[int, int]:
    """Place the call; the carrier leg's (local, remote) RTP ports."""
    carrier_id, gateway_id = _secure_carrier(routing_tenant, carrier_switch, "mandatory", CARRIER_PASSWORD)
    eventually(lambda: _gateway_state(product.switch, gateway_id) == "REGED", timeout=REGISTER_WAIT_SECONDS,
               what="the gateway registers to the carrier")
    binding = carrier_switch.api("sofia status profile carrier reg", check=False)
    assert f"gw+{gateway_name(uuid.UUID(gateway_id))}" in binding and "Registered(TLS)" in binding
    shown = eventually(lambda: (g := routing_tenant.admin.get(f"/api/gateways/{gateway_id}"))["registration"]
                       and g["registration"]["state"] == "REGED" and g, timeout=10, what="the API shows REGED")
    assert "password" not in json.dumps(shown).replace("has_register_password", "")
    changes = [e["payload"]["state"] for e in
               outbound.outbox(owner_engine, "system.gateway.registration", "gatewayId", gateway_id)]
    assert changes[-1] == "REGED"

    prefix = outbound.prefix()
    outbound.route(product, routing_tenant, prefix, [carrier_id])
    number = routing_tenant.number_for([{"verb": "dial", "target": [{"type": "phone", "name": f"+{prefix}5550100"}]}])
    caller = sipp.start_calls(number, scenario="uac-x-headers-bye-after.xml", codec="PCMA", extra=("-d", "4000"))
    try:
        carrier_leg = eventually(lambda: next((r for r in _channels(carrier_switch) if r.get("callstate") == "ACTIVE"),
                                              None), timeout=20, what="the carrier answers")
        product_leg = eventually(lambda: next((r for r in _channels(product.switch)
                                               if r.get("direction") == "outbound" and r.get("callstate") == "ACTIVE"),
                                              None), timeout=10, what="the product's carrier leg is up")
        ours = eventually(lambda: (v := _variables(product.switch, product_leg["uuid"], "rtp_secure_audio_confirmed",
                                                   "rtp_has_crypto", "sip_req_uri"))
                          ["rtp_secure_audio_confirmed"] == "true" and v, timeout=5, what="SRTP confirmed")
        theirs = _variables(carrier_switch, carrier_leg["uuid"], "rtp_secure_audio_confirmed", "sip_via_protocol")
        caller_leg = next(r for r in _channels(product.switch) if r.get("direction") == "inbound")
        sent = _variables(product.switch, caller_leg["uuid"], "sip_h_X-Tenant-Secret")
        received = carrier_switch.api(f"uuid_dump {carrier_leg['uuid']}", check=False)
        seen_at_carrier = _variables(carrier_switch, carrier_leg["uuid"], "sip_via_host", "sip_contact_host",
                                     "remote_media_ip")
        media = _variables(carrier_switch, carrier_leg["uuid"], "local_media_port", "remote_media_port")
    finally:
        result = caller.wait()
    assert result.ok, result.errors or result.stdout[-1500:]
    assert ours["rtp_has_crypto"] == "AES_CM_128_HMAC_SHA1_80"
    assert ours["sip_req_uri"].endswith(f"@127.0.0.1:{carrier_switch.ports.tls_sip};transport=tls")
    assert theirs == {"rtp_secure_audio_confirmed": "true", "sip_via_protocol": "tls"}
    # header hygiene: the caller's X- headers reached the product but not the carrier, and the
    # carrier saw only the advertised address (FS_EXTERNAL_IP, here the bind address)
    assert sent == {"sip_h_X-Tenant-Secret": "from-the-caller"}
    assert [line for line in received.splitlines() if "sip_h_X-" in line or "X-SBC" in line] == []
    assert set(seen_at_carrier.values()) == {product.switch.bind_ip}, seen_at_carrier
    record = routing_tenant.wait_record(number)[0]
    assert (str(record["dial_carrier_id"]), str(record["dial_gateway_id"])) == (carrier_id, gateway_id)
    return int(media["local_media_port"]), int(media["remote_media_port"])


def test_a_plaintext_offer_to_the_mandatory_srtp_carrier_is_refused(product, routing_tenant, sipp, carrier_switch):
    carrier_id, gateway_id = _secure_carrier(routing_tenant, carrier_switch, "off", CARRIER_PASSWORD)
    eventually(lambda: _gateway_state(product.switch, gateway_id) == "REGED", timeout=REGISTER_WAIT_SECONDS,
               what="the gateway registers to the carrier")
    prefix = outbound.prefix()
    outbound.route(product, routing_tenant, prefix, [carrier_id])
    number = routing_tenant.number_for([{"verb": "dial", "target": [{"type": "phone", "name": f"+{prefix}5550100"}]}])
    result = sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "500"))
    assert result.refusal == 488, result.errors  # the carrier's refusal reaches the caller unanswered
    record = routing_tenant.wait_record(number)[0]
    assert record["dial_carrier_id"] is None  # nobody answered the dial
    assert carrier_switch.channel_count() == 0


def test_a_wrong_password_leaves_the_registration_failing(product, routing_tenant, carrier_switch, owner_engine):
    _, gateway_id = _secure_carrier(routing_tenant, carrier_switch, "mandatory", "not-the-password")
    eventually(lambda: _gateway_state(product.switch, gateway_id) in ("FAIL_WAIT", "FAILED"),
               timeout=REGISTER_WAIT_SECONDS, what="the registration fails")
    eventually(lambda: (routing_tenant.admin.get(f"/api/gateways/{gateway_id}")["registration"] or {})
               .get("state") == "FAIL_WAIT", timeout=10, what="the API shows FAIL_WAIT")
    events = outbound.outbox(owner_engine, "system.gateway.registration", "gatewayId", gateway_id)
    assert "FAIL_WAIT" in [e["payload"]["state"] for e in events]
    with product.routing_changes(1):
        routing_tenant.admin.patch(f"/api/gateways/{gateway_id}", {"register_password": CARRIER_PASSWORD})
    eventually(lambda: _gateway_state(product.switch, gateway_id) == "REGED", timeout=REGISTER_WAIT_SECONDS,
               what="the new password registers without a restart")


def test_a_call_through_the_registration_reaches_the_number_and_is_tied_to_the_carrier(
        product, routing_tenant, carrier_switch):
    carrier_id, gateway_id = _secure_carrier(routing_tenant, carrier_switch, "mandatory", CARRIER_PASSWORD)
    eventually(lambda: _gateway_state(product.switch, gateway_id) == "REGED", timeout=REGISTER_WAIT_SECONDS,
               what="the gateway registers to the carrier")
    number = routing_tenant.number_for([{"verb": "say", "text": "You reached us through the registration."},
                                        {"verb": "hangup"}])
    # what a registrar does: the INVITE goes to the registered contact (gw+<gateway>, over TLS),
    # the dialled number in To
    contact = f"sip:gw+{gateway_name(uuid.UUID(gateway_id))}@127.0.0.1:{product.switch.ports.tls_sip};transport=tls"
    reply = carrier_switch.api(f"originate {{sip_invite_to_uri=<sip:{number}@{DOMAIN}>}}sofia/carrier/{contact} &park",
                               timeout=30)
    assert reply.startswith("+OK"), reply
    inbound = eventually(lambda: next((r for r in _channels(product.switch) if r.get("direction") == "inbound"
                                       and r.get("dest") == number), None), timeout=10, what="the call arrived")
    secure = _variables(product.switch, inbound["uuid"], "rtp_secure_audio_confirmed", "sip_gateway_name",
                        "sip_gateway", "sip_to_user", "sip_req_user")
    record = routing_tenant.wait_record(number)[0]
    assert (str(record["carrier_id"]), str(record["gateway_id"]), record["status"]) == \
        (carrier_id, gateway_id, "completed"), secure
    assert secure["rtp_secure_audio_confirmed"] == "true"
    assert gateway_name(uuid.UUID(gateway_id)) in (secure["sip_gateway_name"], secure["sip_gateway"])
    assert secure["sip_to_user"] == number


def test_a_carrier_whose_certificate_chains_to_no_trusted_ca_is_never_registered(
        product, routing_tenant, realswitch_workdir):
    """Verification is on: the same carrier, its certificate from a CA the product's
    cafile.pem does not hold, never gets the REGISTER (sofia gives up: FAIL_WAIT)."""
    stranger = CarrierSwitch(freeswitch_tree(), realswitch_workdir / "stranger-fs", SwitchPorts.pick(),
                             "stranger-esl", realswitch_workdir / "stranger-ca", CARRIER_PASSWORD)
    stranger.start()
    try:
        _, gateway_id = _secure_carrier(routing_tenant, stranger, "off", CARRIER_PASSWORD)
        eventually(lambda: _gateway_state(product.switch, gateway_id) == "FAIL_WAIT", timeout=UNTRUSTED_WAIT_SECONDS,
                   what="the registration to an untrusted carrier fails")
        assert "gw+" not in stranger.api("sofia status profile carrier reg", check=False)
    finally:
        stranger.stop()
