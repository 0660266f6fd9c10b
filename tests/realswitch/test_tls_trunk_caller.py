"""A trunk caller over SIP over TLS (issue 25), with a real third-party client: Debian's
baresip 1.0 dials the product's TLS listener (``FS_TLS_SIP_PORT``) with ``;transport=tls``,
checking the switch's certificate against the run's development CA (``sip_cafile``).

Why baresip and not sipp: Debian's sipp 3.6.1 is built without OpenSSL (``sipp -t l1`` says
"To use a TLS transport you must compile SIPp with OpenSSL").

A tshark capture of the TLS listener and the switch's RTP range shows the handshake and no
SIP in clear; the caller hears the application's speech for the whole call. A TLS client from
an address outside the trunk ACL gets 403 over TLS as over UDP, and no call exists. And a
mandatory-SRTP carrier that offers plain RTP is refused (488, record ``refused``,
``srtp_required``)."""
from __future__ import annotations

import socket
import ssl
import uuid

from tests.plugins.eventually import eventually
from tests.plugins.skips import skip_or_fail_in_ci
from tests.realswitch.rtp_capture import RtpCapture, tshark_available
from tests.realswitch.softphones import measure_wav

SENTENCE = ("You called us over an encrypted line. This sentence is spoken by the switch so that "
            "the caller can prove it heard the whole of it.")
SPEECH_DBFS = -40.0               # flite speaks at ~ -29 dBFS; silence is below -60
LENGTH_TOLERANCE_SECONDS = 0.3    # received audio vs the answered call (jitter buffer, 1st packet)
OUTSIDE_THE_ACL = "127.0.0.2"     # loopback too, but no gateway lists it
SRTP_CARRIER_IP = "127.0.0.3"     # the mandatory-SRTP carrier's signalling address
BARESIP_TLS_PORT_OFFSET = 1       # baresip 1.0 listens for SIP over TLS on its SIP port + 1


def _tls_uri(number: str, real_switch) -> str:
    return f"sip:{number}@127.0.0.1:{real_switch.ports.tls_sip};transport=tls"


def test_a_baresip_trunk_caller_over_tls_hears_the_application_and_no_sip_is_in_clear(
        tenant, real_switch, softphones, realswitch_workdir):
    if reason := tshark_available():
        skip_or_fail_in_ci(reason)
    number = tenant.number_for([{"verb": "say", "text": SENTENCE}, {"verb": "hangup"}])
    ports = real_switch.ports
    caller = softphones.baresip("tls-caller", tls_ca=real_switch.ca_dir)
    # the switch's TLS listener, the phone's own TLS listener and the RTP range
    capture = RtpCapture(realswitch_workdir / f"tls-caller-{uuid.uuid4().hex[:6]}.pcap", ports.rtp_start,
                         ports.rtp_end, also_ports=(ports.tls_sip, caller.sip_port + BARESIP_TLS_PORT_OFFSET))
    try:
        capture.wait_live(ports.rtp_end)
        caller.dial(_tls_uri(number, real_switch))
        caller.wait_established()
        caller.wait_closed(timeout=40)  # the application hangs up after the sentence
    finally:
        capture.stop()
    record = tenant.wait_record(number)[0]
    heard = measure_wav(caller.received_wav())
    print(f"baresip over TLS heard {heard} of a {record['talk_ms']} ms call")
    assert (record["status"], str(record["carrier_id"])) == ("completed", tenant.carrier_id)
    assert heard.rms_dbfs > SPEECH_DBFS, heard
    assert abs(heard.seconds - record["talk_ms"] / 1000) <= LENGTH_TOLERANCE_SECONDS, (heard, record["talk_ms"])
    assert heard.active_seconds >= 0.7 * heard.seconds, heard
    assert heard.last_active_second >= heard.seconds - 1.0, heard

    handshakes = capture.tls_handshakes(ports.tls_sip)
    assert (ports.tls_sip, 1) in [(dst, kind) for _, dst, kind in handshakes], handshakes  # baresip's ClientHello
    assert (ports.tls_sip, 2) in [(src, kind) for src, _, kind in handshakes], handshakes  # the switch's ServerHello
    # the dialled number is this call's own: nowhere in the pcap. The SIP markers are looked for
    # on the call's TLS ports only: the capture filter is by port, so another test's loopback
    # traffic whose ports fall in the RTP range can be in the file
    assert number.encode() not in capture.path.read_bytes()
    tls_ports = f"tcp.port == {ports.tls_sip} || tcp.port == {caller.sip_port + BARESIP_TLS_PORT_OFFSET}"
    assert capture.frames_matching(f'({tls_ports}) && (sip || frame contains "SIP/2.0" '
                                   f'|| frame contains "INVITE sip:")') == 0
    assert capture.frames_matching(f"tcp.dstport == {ports.tls_sip} && tcp.len > 0") > 0  # the call did use it


def _tls_invite_from(source_ip: str, number: str, real_switch) -> str:
    """Send one INVITE over TLS from ``source_ip`` (the switch's certificate checked against
    the run's CA) and return the first final response's status line. Python's ssl is OpenSSL,
    as baresip's; baresip itself cannot be used here: libre connects TCP without binding its
    ``net_interface``, so its TLS connection came from 127.0.0.1 (measured: the switch logged
    "receiving invite from 127.0.0.1" for a baresip on 127.0.0.2, and admitted the call)."""
    port = real_switch.ports.tls_sip
    context = ssl.create_default_context(cafile=str(real_switch.ca_dir / "ca.pem"))
    with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source_ip, 0)) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        local = tls.getsockname()
        assert local[0] == source_ip, local
        sdp = SDP.format(ip=source_ip).replace("\n", "\r\n")
        tls.sendall(INVITE.replace("\n", "\r\n").format(
            number=number, port=port, ip=source_ip, local_port=local[1], call_id=uuid.uuid4().hex,
            branch=uuid.uuid4().hex, length=len(sdp), sdp=sdp).encode())
        received = b""
        tls.settimeout(1)

        def final_response() -> str | None:
            nonlocal received
            try:
                received += tls.recv(65536)
            except TimeoutError:  # nothing yet
                return None
            statuses = [line for line in received.decode(errors="replace").splitlines()
                        if line.startswith("SIP/2.0 ") and not line.startswith("SIP/2.0 1")]
            return statuses[0] if statuses else None
        return eventually(final_response, timeout=10, what="a final response over TLS")


# a trunk caller's INVITE (G.711, plain RTP) as a carrier's SBC would send it over TLS
INVITE = """INVITE sip:{number}@127.0.0.1:{port};transport=tls SIP/2.0
Via: SIP/2.0/TLS {ip}:{local_port};branch=z9hG4bK{branch};rport
Max-Forwards: 70
From: <sip:15550009@{ip}>;tag={branch}
To: <sip:{number}@127.0.0.1>
Call-ID: {call_id}
CSeq: 1 INVITE
Contact: <sip:15550009@{ip}:{local_port};transport=tls>
Content-Type: application/sdp
Content-Length: {length}

{sdp}"""
SDP = """v=0
o=- 1 1 IN IP4 {ip}
s=-
c=IN IP4 {ip}
t=0 0
m=audio 40000 RTP/AVP 0
a=rtpmap:0 PCMU/8000
"""


def test_a_tls_caller_outside_the_gateway_acl_is_refused_403(tenant, real_switch):
    number = tenant.number_for([{"verb": "say", "text": SENTENCE}, {"verb": "hangup"}])
    offset = real_switch.log_offset()
    assert _tls_invite_from(OUTSIDE_THE_ACL, number, real_switch).startswith("SIP/2.0 403")
    assert f'IP {OUTSIDE_THE_ACL} Rejected by acl "gateways"' in real_switch.log_since(offset)
    assert real_switch.channel_count() == 0
    assert tenant.records(number) == []


def test_the_same_tls_invite_from_a_gateway_address_is_admitted(tenant, real_switch):
    """The refusal above is the ACL's, not the hand-made INVITE's: from 127.0.0.1 (the
    tenant's trunk) the same request reaches the application."""
    number = tenant.number_for([{"verb": "hangup"}])
    status = _tls_invite_from("127.0.0.1", number, real_switch)
    assert not status.startswith("SIP/2.0 403"), status
    assert tenant.wait_record(number)[0]["carrier_id"] is not None


def test_a_plain_rtp_offer_from_a_mandatory_srtp_carrier_is_refused_488(tenant, sipp):
    with tenant.admin.product.routing_changes(2):
        carrier = tenant.admin.post("/api/carriers", {"name": f"srtp-only-{uuid.uuid4().hex[:6]}",
                                                      "srtp": "mandatory"})
        gateway = tenant.admin.post(f"/api/carriers/{carrier['id']}/gateways", {
            "ipv4": SRTP_CARRIER_IP, "inbound": True, "outbound": False})
    number = tenant.number_for([{"verb": "say", "text": SENTENCE}, {"verb": "hangup"}])
    result = sipp.call(number, source_ip=SRTP_CARRIER_IP)  # sipp's offer is plain RTP/AVP
    assert result.refusal == 488, result.errors or result.stdout[-1500:]
    record = tenant.wait_record(number)[0]
    assert (record["status"], str(record["carrier_id"]), str(record["gateway_id"])) == \
        ("refused", carrier["id"], gateway["id"])
    failed = eventually(lambda: [e for e in tenant.events("call.failed")
                                 if e["payload"].get("callId") == str(record["call_id"])],
                        timeout=10, what="call.failed in the outbox")
    assert failed[0]["payload"]["reason"] == "srtp_required", failed[0]["payload"]
