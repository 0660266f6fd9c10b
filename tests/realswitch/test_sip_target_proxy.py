"""A ``sip:`` target on a listed host cannot send its INVITE to another host (issue 28, item 1).

Measured on FreeSWITCH 1.10.12, the text handed to ``sofia/external/`` as it was:
``<user>@<listed host>;fs_path=sip%3A<host>`` sends the INVITE to ``<host>`` (mod_sofia makes it
the outbound proxy: a Route to it), and ``;maddr=<host>`` sends it to ``<host>`` on the URI's
port (sofia-sip). The old save pattern admitted ``maddr=<host>``; it refused the ``%3A`` that a
working fs_path needs (``fs_path=<host>`` without ``sip:`` fails the call, and an fs_path in
the user part went to the listed host unchanged). Here the listed host is 127.0.0.1 (a sipp
PBX) and the other host 127.0.0.2, never listed, with a sipp listener where each URI points.
The URIs are refused when saved and, arriving in a webhook reply, before anything is bridged:
neither the listener on 127.0.0.2 nor the PBX sees an INVITE. Listing 127.0.0.2 afterwards and
dialling it plainly shows the listener does record the INVITEs it gets."""
from __future__ import annotations

import pytest

from tests.plugins.webhook_server import Reply
from tests.realswitch.provision import poll

OTHER_HOST = "127.0.0.2"  # loopback too, but not on the account's list
SIP_DEFAULT_PORT = 5060   # where fs_path=<host> without a port sends the INVITE


def _list(tenant, host: str) -> None:
    if not any(t["host"] == host for t in tenant.admin.get("/api/sip-targets")):
        tenant.admin.post("/api/sip-targets", {"host": host})


def _unlist(tenant, host: str) -> None:
    for target in tenant.admin.get("/api/sip-targets"):
        if target["host"] == host:
            tenant.admin.request("DELETE", f"/api/sip-targets/{target['id']}", expect=204)


def _dial(uri: str) -> list[dict]:
    return [{"verb": "dial", "timeout": 10, "target": [{"type": "sip", "name": uri}]}]


def _invites(messages: str) -> int:
    return sum(1 for line in messages.splitlines() if line.startswith("INVITE "))


def _call(tenant, sipp, number: str):
    return sipp.call(number, scenario="uac-bye-after.xml", extra=("-d", "1000"), timeout=40)


@pytest.mark.parametrize(("parameter", "value"), [("fs_path", f"sip%3A{OTHER_HOST}"), ("maddr", OTHER_HOST)])
def test_a_listed_host_with_a_proxy_parameter_never_sends_the_invite_to_the_host_it_names(
        tenant, sipp, hook_server, real_switch, parameter, value):
    _list(tenant, "127.0.0.1")
    pbx = sipp.carrier(extra=("-trace_msg",))  # the listed host's PBX
    # fs_path=<host> is the outbound proxy on 5060; maddr=<host> keeps the URI's port
    other_port = SIP_DEFAULT_PORT if parameter == "fs_path" else pbx.port
    other = sipp.carrier(extra=("-trace_msg",), ip=OTHER_HOST, port=other_port)
    hostile = f"sip:callee@127.0.0.1:{pbx.port};{parameter}={value}"
    try:
        saved = tenant.admin.post("/api/applications", {"name": "pbx", "app_json": _dial(hostile)},
                                  expect=(201, 422))

        hook_server.reply(Reply.json(_dial(hostile)))
        number = tenant.number_for([{"verb": "hangup"}], call_hook_url=hook_server.url("/dial"))
        _call(tenant, sipp, number)
        record = tenant.wait_record(number)[0]
        assert poll(lambda: real_switch.channel_count() == 0, 10)

        _list(tenant, OTHER_HOST)  # the control: a plain dial to the listener does reach it
        answered = _call(tenant, sipp, tenant.number_for(_dial(f"sip:callee@{OTHER_HOST}:{other_port}")))
        assert answered.ok, answered.errors or answered.stdout[-2000:]
        assert poll(lambda: real_switch.channel_count() == 0, 10)
    finally:
        other_seen, pbx_seen = other.stop(), pbx.stop()
        _unlist(tenant, OTHER_HOST)  # the tenant is shared with the package's other tests

    # one INVITE reached the unlisted host: the control call's; none from the hostile dial
    assert _invites(other_seen.messages) == 1, other_seen.messages[-3000:]
    assert _invites(pbx_seen.messages) == 0, pbx_seen.messages[-2000:]
    assert record["webhook_error"], record  # the reply was refused as a whole: no dial ran
    assert saved.get("code") == "verb_list_rejected" and parameter in str(saved["details"]), saved
