"""sip: dial targets through a live session: a host the account does not list is never bridged
(loopback, private, metadata, or simply unlisted); a listed public host is; a listed host whose
name now resolves to a private address is refused at dial time."""
from __future__ import annotations

import pytest

from tests.plugins.webhook_server import Reply
from tests.session.conftest import executed
from tests.simulator import Call


def _dial_reply(hook_server, uri: str) -> None:
    hook_server.reply(Reply.json([{"verb": "dial", "target": [{"type": "sip", "name": uri}]}]))


def _bridges(call) -> list[str]:
    return [arg for app, arg in executed(call) if app == "bridge"]


@pytest.mark.parametrize("uri", ["sip:admin@127.0.0.1:5080", "sip:x@10.0.0.5", "sip:x@169.254.169.254",
                                 "sip:x@pbx.example.com"])
def test_given_unlisted_sip_target_in_a_webhook_reply_when_dialled_then_no_bridge(
        controller, simulate_call, hook_server, number_with_app, owner_conn, uri):
    _dial_reply(hook_server, uri)
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"))

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(10)

    assert _bridges(call) == []


def test_given_listed_public_host_when_dialled_then_bridged_and_listed_host_turning_private_refused(
        controller, simulate_call, hook_server, number_with_app):
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"),
                                          sip_hosts=("pbx.example.com", "internal.example.com"))

    _dial_reply(hook_server, "sip:bob@pbx.example.com")
    listed = simulate_call(Call(callee=number), controller)
    assert listed.wait(10)
    _dial_reply(hook_server, "sip:bob@internal.example.com")  # its name now resolves to 10.0.0.5
    turned = simulate_call(Call(callee=number), controller)
    assert turned.wait(10)

    assert len(_bridges(listed)) == 1 and _bridges(listed)[0].endswith("sofia/external/bob@pbx.example.com")
    assert _bridges(turned) == []


@pytest.mark.parametrize("uri", ["sip:bob@pbx.example.com;fs_path=10.0.0.5",
                                 "sip:a;fs_path=sip%3A10.0.0.5;x=y@pbx.example.com",
                                 "sip:bob@pbx.example.com;maddr=10.0.0.5",
                                 "sip:bob@pbx.example.com?Route=%3Csip:10.0.0.5;lr%3E"])
def test_given_a_listed_host_with_proxy_parameters_in_a_webhook_reply_when_dialled_then_no_bridge(
        controller, simulate_call, hook_server, number_with_app, uri):
    """Listing pbx.example.com admits that host only: fs_path, maddr or a Route header would send
    the INVITE to 10.0.0.5 (issue 28). The reply is refused as a whole; nothing is bridged."""
    _dial_reply(hook_server, uri)
    _account, number, _ = number_with_app(call_hook_url=hook_server.url("/hook"), sip_hosts=("pbx.example.com",))

    call = simulate_call(Call(callee=number), controller)
    assert call.wait(10)

    assert _bridges(call) == []
    assert not any("10.0.0.5" in arg for _app, arg in executed(call))
