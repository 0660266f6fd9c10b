"""ws(s):// call handler against a real local WebSocket server."""
import time

import pytest

from app.webhooks import Reason, StaticResolver, WebhookFailed, WsCallHandler

SESSION_BODY = {"callId": "c-1", "traceId": "t-1", "accountSid": "a-1", "applicationSid": "p-1",
                "from": "15551234567", "to": "15557654321", "direction": "inbound",
                "callStatus": "ringing"}


def handler(url: str, **kw) -> WsCallHandler:
    kw.setdefault("allow_loopback", True)
    kw.setdefault("resolver", StaticResolver({"app.test": "127.0.0.1"}))
    kw.setdefault("reconnect_delays", (0.05, 0.1, 0.2))
    kw.setdefault("ack_timeout", 3.0)
    return WsCallHandler(url, call_sid="c-1", **kw)


def test_given_ws_handler_when_session_starts_then_session_new_is_acked_with_verbs(ws_server):
    h = handler(ws_server.url())
    try:
        verbs = h.start(SESSION_BODY)
    finally:
        h.close()
    assert verbs == [{"verb": "say", "text": "hello"}]
    [message] = ws_server.messages
    assert message["type"] == "session:new" and message["call_sid"] == "c-1"
    assert message["data"] == SESSION_BODY and message["msgid"]
    peer = ws_server.peers[0]
    assert peer.headers["sec-websocket-protocol"] == "audio.saas-sbc.org"
    assert peer.headers["user-agent"] == "SaaS-SBC/1.0"
    assert "origin" not in peer.headers


def test_given_vendor_from_runtime_config_when_connecting_then_subprotocol_uses_it(ws_server):
    ws_server.subprotocol = "audio.acme.org"
    h = handler(ws_server.url(), vendor="acme")
    try:
        h.start(SESSION_BODY)
    finally:
        h.close()
    assert ws_server.peers[0].headers["sec-websocket-protocol"] == "audio.acme.org"


def test_given_server_without_our_subprotocol_when_connecting_then_protocol_failure(ws_server):
    ws_server.subprotocol = "audio.other.org"
    h = handler(ws_server.url(), connect_delays=(0.0,))
    with pytest.raises(WebhookFailed) as caught:
        h.start(SESSION_BODY)
    assert caught.value.reason == Reason.PROTOCOL and caught.value.attempts == 3


def test_given_ack_without_data_when_session_starts_then_none(ws_server):
    ws_server.ack_data = None
    h = handler(ws_server.url())
    try:
        assert h.start(SESSION_BODY) is None
    finally:
        h.close()


def test_given_ack_with_empty_list_when_session_starts_then_list_returned_for_rejection(ws_server):
    ws_server.ack_data = []
    h = handler(ws_server.url())
    try:
        assert h.start(SESSION_BODY) == []   # the caller's parse_verb_list rejects it, as over HTTP
    finally:
        h.close()


def test_given_gather_result_when_verb_hook_sent_then_ack_verbs_returned(ws_server):
    h = handler(ws_server.url())
    try:
        h.start(SESSION_BODY)
        ws_server.ack_data = [{"verb": "hangup"}]
        verbs = h.verb_hook("/gather-done", {"callId": "c-1", "digits": "42", "speech": None})
    finally:
        h.close()
    assert verbs == [{"verb": "hangup"}]
    hook = ws_server.messages[1]
    assert hook["type"] == "verb:hook" and hook["hook"] == "/gather-done"
    assert hook["data"]["digits"] == "42"


def test_given_status_update_when_sent_then_call_status_message_without_ack(ws_server):
    h = handler(ws_server.url())
    try:
        h.start(SESSION_BODY)
        h.send_status({"callStatus": "in-progress"})
        ws_server.wait_for(lambda m: any(x["type"] == "call:status" for x in m))
    finally:
        h.close()
    status = [m for m in ws_server.messages if m["type"] == "call:status"][0]
    assert status["data"] == {"callStatus": "in-progress"}


def test_given_app_commands_when_received_then_known_ones_queued_and_unknown_ignored(ws_server):
    h = handler(ws_server.url())
    try:
        h.start(SESSION_BODY)
        peer = ws_server.peers[0]
        peer.send_json({"type": "command", "command": "exec-shell", "data": "rm -rf /"})
        peer.send_json({"type": "bogus"})
        peer.send_json({"type": "command", "command": "redirect",
                        "data": [{"verb": "say", "text": "moved"}]})
        peer.send_json({"type": "command", "command": "hangup"})
        first = h.commands.get(timeout=3)
        second = h.commands.get(timeout=3)
    finally:
        h.close()
    assert first == {"command": "redirect", "data": [{"verb": "say", "text": "moved"}]}
    assert second == {"command": "hangup", "data": None}
    assert h.commands.empty()


def test_given_server_drop_when_connected_then_handler_reconnects_and_announces_session(ws_server):
    h = handler(ws_server.url())
    try:
        h.start(SESSION_BODY)
        ws_server.peers[0].drop()
        ws_server.wait_for(lambda m: any(x["type"] == "session:reconnect" for x in m))
        assert h.reconnects == 1 and len(ws_server.peers) == 2
        reconnect = [m for m in ws_server.messages if m["type"] == "session:reconnect"][0]
        assert reconnect["call_sid"] == "c-1" and reconnect["data"] == SESSION_BODY
        ws_server.ack_data = [{"verb": "pause", "length": 1}]
        assert h.verb_hook("/next", {"digits": "1"}) == [{"verb": "pause", "length": 1}]
    finally:
        h.close()


def test_given_drop_while_waiting_for_ack_when_reconnected_then_request_resent_with_same_msgid(
        ws_server):
    dropped = []

    def flaky(peer, message):
        if message["type"] == "verb:hook" and not dropped:
            dropped.append(message["msgid"])
            peer.drop()                       # the app crashes before acking
            return
        ws_server._default_on_message(peer, message)

    h = handler(ws_server.url())
    try:
        h.start(SESSION_BODY)
        ws_server.on_message = flaky
        ws_server.ack_data = [{"verb": "hangup"}]
        verbs = h.verb_hook("/after-gather", {"digits": "9"})
    finally:
        h.close()
    assert verbs == [{"verb": "hangup"}]
    hooks = [m for m in ws_server.messages if m["type"] == "verb:hook"]
    assert len(hooks) == 2 and hooks[0]["msgid"] == hooks[1]["msgid"] == dropped[0]


def test_given_server_gone_for_good_when_dropped_then_handler_dies_after_bounded_backoff(ws_server):
    h = handler(ws_server.url(), reconnect_delays=(0.05, 0.05))
    h.start(SESSION_BODY)
    started = time.monotonic()
    ws_server.stop()
    assert h.commands.get(timeout=5) is None   # the end-of-handler signal
    assert h.dead and time.monotonic() - started >= 0.1
    with pytest.raises(WebhookFailed) as caught:
        h.verb_hook("/x", {})
    assert caught.value.reason == Reason.CLOSED
    h.close()


def test_given_no_ack_when_waiting_then_timeout_failure(ws_server):
    ws_server.on_message = lambda peer, message: None
    h = handler(ws_server.url(), ack_timeout=0.3)
    try:
        with pytest.raises(WebhookFailed) as caught:
            h.start(SESSION_BODY)
    finally:
        h.close()
    assert caught.value.reason == Reason.TIMEOUT


@pytest.mark.parametrize("ip", ["10.0.0.1", "169.254.169.254", "::ffff:192.168.0.1", "100.64.0.1"])
def test_given_ws_host_resolving_to_forbidden_address_when_starting_then_refused(ip):
    h = handler("wss://app.test/call", resolver=StaticResolver({"app.test": ip}))
    with pytest.raises(WebhookFailed) as caught:
        h.start(SESSION_BODY)
    assert caught.value.reason == Reason.UNSAFE


def test_given_loopback_not_allowed_when_starting_ws_then_refused(ws_server):
    h = handler(ws_server.url(), allow_loopback=False)
    with pytest.raises(WebhookFailed) as caught:
        h.start(SESSION_BODY)
    assert caught.value.reason == Reason.UNSAFE
    assert ws_server.peers == []


def test_given_wss_with_cert_for_host_when_starting_then_tls_verified_and_sni_sent(
        tls_ca, wss_server):
    server = wss_server(["app.test"])
    h = handler(server.url(host="app.test"), ca_bundle=tls_ca.ca_file)
    try:
        assert h.start(SESSION_BODY) == [{"verb": "say", "text": "hello"}]
    finally:
        h.close()
    assert server.sni == ["app.test"]
    assert server.peers[0].headers["host"] == f"app.test:{server._server.server_port}"


def test_given_wss_with_cert_for_other_name_when_starting_then_tls_failure(tls_ca, wss_server):
    server = wss_server(["other.test"])
    h = handler(server.url(host="app.test"), ca_bundle=tls_ca.ca_file, connect_delays=(0.0,))
    with pytest.raises(WebhookFailed) as caught:
        h.start(SESSION_BODY)
    assert caught.value.reason == Reason.TLS
    assert server.peers == []


def test_given_server_that_never_completes_the_upgrade_when_starting_then_timeout_per_attempt():
    import gevent.server

    def silent(sock, address):
        gevent.sleep(5)   # scenario: accepts TCP, never answers the HTTP upgrade

    server = gevent.server.StreamServer(("127.0.0.1", 0), silent)
    server.start()
    try:
        h = handler(f"ws://127.0.0.1:{server.server_port}/call", connect_timeout=0.2,
                    connect_attempts=2, connect_delays=(0.0,))
        started = time.monotonic()
        with pytest.raises(WebhookFailed) as caught:
            h.start(SESSION_BODY)
        assert caught.value.reason == Reason.TIMEOUT and caught.value.attempts == 2
        assert time.monotonic() - started >= 2 * 0.2
    finally:
        server.stop(timeout=0.1)
