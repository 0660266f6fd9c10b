"""WebhookClient against a real local HTTP server (plain http to loopback: dev/test mode)."""
import base64
import json
import time
from urllib.parse import parse_qsl

import pytest

from app.webhooks import Reason, StaticResolver, WebhookClient, WebhookFailed
from app.webhooks.signing import verify
from tests.plugins.webhook_server import Reply

FIRST_BODY = {
    "callId": "0f6c3c1e-6a53-4c47-9d44-3f0b5c7d9a11",
    "traceId": "8d1f4a9e-2b7c-4e55-8a0d-6c2e9f1b3d47",
    "accountSid": "3b1e2d4c-5f6a-4b7c-8d9e-0a1b2c3d4e5f",
    "applicationSid": "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
    "from": "15551234567", "to": "15557654321",
    "direction": "inbound", "callStatus": "ringing",
    "note": "café",   # non-ASCII: signed and sent as UTF-8 bytes
}


def client(**kw) -> WebhookClient:
    kw.setdefault("allow_loopback", True)
    kw.setdefault("resolver", StaticResolver({"hooks.test": "127.0.0.1"}))
    kw.setdefault("sleep", lambda s: time.sleep(s))  # scenario: the client's own retry pauses, really taken
    return WebhookClient(**kw)


def test_given_secret_when_posting_then_server_verifies_signature_over_raw_bytes(hook_server):
    hook_server.reply(Reply.json([{"verb": "say", "text": "hi"}]))
    verbs = client().fetch_instructions(hook_server.url(), "POST", FIRST_BODY, secret="whsec")
    assert verbs == [{"verb": "say", "text": "hi"}]
    [req] = hook_server.requests
    assert verify(req.body, "whsec", req.headers["x-signature"])
    reserialised = json.dumps(json.loads(req.body)).encode()
    assert not verify(reserialised, "whsec", req.headers["x-signature"])
    assert json.loads(req.body) == FIRST_BODY


def test_given_request_when_sent_then_spec_headers_and_no_signature_without_secret(hook_server):
    client().fetch_instructions(hook_server.url(), "POST", FIRST_BODY)
    [req] = hook_server.requests
    assert req.method == "POST"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["user-agent"] == "SaaS-SBC/1.0"
    assert "x-signature" not in req.headers
    assert "authorization" not in req.headers


def test_given_basic_auth_when_posting_then_authorization_header_carries_credentials(hook_server):
    client().fetch_instructions(hook_server.url(), "POST", FIRST_BODY,
                                basic_auth=("acme", "p@ss:word"))
    header = hook_server.requests[0].headers["authorization"]
    assert header.startswith("Basic ")
    assert base64.b64decode(header[6:]).decode() == "acme:p@ss:word"


def test_given_get_method_when_fetching_then_fields_are_query_params_and_query_is_signed(hook_server):
    body = {"callId": "c1", "digits": "1234", "tags": {"a": 1}, "final": True, "speech": None}
    client().fetch_instructions(hook_server.url("/hook?app=7"), "GET", body, secret="k")
    [req] = hook_server.requests
    assert req.method == "GET" and req.body == b""
    params = dict(parse_qsl(req.query, keep_blank_values=True))
    assert params == {"app": "7", "callId": "c1", "digits": "1234", "tags": '{"a":1}',
                      "final": "true", "speech": ""}
    signed_part = req.query.split("&", 1)[1].encode()   # what we appended after app=7
    assert verify(signed_part, "k", req.headers["x-signature"])


def test_given_empty_body_when_fetching_then_none_means_no_instructions(hook_server):
    hook_server.reply(Reply(status=200, body=b""))
    assert client().fetch_instructions(hook_server.url(), "POST", FIRST_BODY) is None
    hook_server.reply(Reply(status=204, body=b""))
    assert client().fetch_instructions(hook_server.url(), "POST", FIRST_BODY) is None


def test_given_json_that_is_not_a_list_when_fetching_then_value_is_returned_for_caller_validation(
        hook_server):
    hook_server.reply(Reply.json({"verb": "say"}))
    assert client().fetch_instructions(hook_server.url(), "POST", {}) == {"verb": "say"}
    hook_server.reply(Reply.json([]))
    assert client().fetch_instructions(hook_server.url(), "POST", {}) == []


def test_given_body_not_json_when_fetching_then_retried_and_fails_invalid_json(hook_server):
    hook_server.reply(Reply(status=200, body=b"<html>maintenance</html>",
                            headers={"Content-Type": "text/html"}))
    with pytest.raises(WebhookFailed) as caught:
        client(retry_delays=(0.0, 0.0)).fetch_instructions(hook_server.url(), "POST", {})
    assert caught.value.reason == Reason.INVALID_JSON
    assert caught.value.attempts == 3 and caught.value.last_status == 200
    assert len(hook_server.requests) == 3


def test_given_non_json_then_json_when_retrying_then_second_attempt_succeeds(hook_server):
    hook_server.reply(Reply(status=200, body=b"oops"), Reply.json([{"verb": "hangup"}]))
    verbs = client(retry_delays=(0.0, 0.0)).fetch_instructions(hook_server.url(), "POST", {})
    assert verbs == [{"verb": "hangup"}] and len(hook_server.requests) == 2


def test_given_non_2xx_when_fetching_then_three_attempts_then_webhook_failed(hook_server):
    hook_server.reply(Reply(status=503, body=b"busy"))
    with pytest.raises(WebhookFailed) as caught:
        client(retry_delays=(0.0, 0.0)).fetch_instructions(hook_server.url(), "POST", {})
    assert (caught.value.reason, caught.value.attempts, caught.value.last_status) == (
        Reason.HTTP_STATUS, 3, 503)
    assert len(hook_server.requests) == 3


def test_given_5xx_then_ok_when_fetching_then_retry_recovers(hook_server):
    hook_server.reply(Reply(status=500), Reply(status=503), Reply.json([{"verb": "pause"}]))
    verbs = client(retry_delays=(0.0, 0.0)).fetch_instructions(hook_server.url(), "POST", {})
    assert verbs == [{"verb": "pause"}] and len(hook_server.requests) == 3


def test_given_slow_server_when_fetching_then_each_attempt_times_out_with_spec_spacing(hook_server):
    hook_server.reply(Reply(delay=2.0))
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        time.sleep(seconds)  # scenario: the client's retry pauses, recorded and really taken

    started = time.monotonic()
    with pytest.raises(WebhookFailed) as caught:
        client(timeout=0.2, sleep=sleep).fetch_instructions(hook_server.url(), "POST", {})
    assert pauses == [0.5, 1.0]   # the spec's defaults from app/limits.py
    assert caught.value.reason == Reason.TIMEOUT and caught.value.attempts == 3
    arrivals = [r.at for r in hook_server.requests]
    assert len(arrivals) == 3
    # Server-side arrival gaps include the pause (plus the timeout, minus arrival jitter).
    assert arrivals[1] - arrivals[0] >= 0.5
    assert arrivals[2] - arrivals[1] >= 1.0
    # Client side: three full per-attempt budgets plus both pauses.
    assert time.monotonic() - started >= 3 * 0.2 + 0.5 + 1.0


def test_given_redirect_when_fetching_then_not_followed_and_counted_as_failure(hook_server):
    hook_server.reply(Reply(status=302, body=b"", headers={"Location": "http://127.0.0.1:1/x"}))
    with pytest.raises(WebhookFailed) as caught:
        client(retry_delays=(0.0, 0.0)).fetch_instructions(hook_server.url("/a"), "POST", {})
    assert caught.value.reason == Reason.HTTP_STATUS and caught.value.last_status == 302
    assert [r.path for r in hook_server.requests] == ["/a", "/a", "/a"]


def test_given_oversized_body_when_fetching_then_response_too_large(hook_server):
    big = b"[" + b'{"verb":"pause"},' * 100 + b'{"verb":"pause"}]'
    hook_server.reply(Reply(body=big))
    with pytest.raises(WebhookFailed) as caught:
        client(max_response_bytes=1000, retry_delays=(0.0,)).fetch_instructions(
            hook_server.url(), "POST", {})
    assert caught.value.reason == Reason.TOO_LARGE


def test_given_oversized_chunked_body_without_length_when_fetching_then_capped(hook_server):
    def stream():
        for _ in range(64):
            yield b" " * 1024
        yield b"[]"
    hook_server.reply(Reply(body=stream, headers={"Content-Type": "application/json"}))
    with pytest.raises(WebhookFailed) as caught:
        client(max_response_bytes=8 * 1024, attempts=1).fetch_instructions(
            hook_server.url(), "POST", {})
    assert caught.value.reason == Reason.TOO_LARGE


def test_given_connection_refused_when_fetching_then_connection_error_after_retries():
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()   # nothing listens there now
    with pytest.raises(WebhookFailed) as caught:
        client(retry_delays=(0.0, 0.0)).fetch_instructions(f"http://127.0.0.1:{port}/", "POST", {})
    assert caught.value.reason == Reason.CONNECTION and caught.value.attempts == 3


def test_given_name_only_in_stub_resolver_when_fetching_then_system_dns_is_never_used(hook_server):
    resolver = StaticResolver({"hooks.test": "127.0.0.1"})
    client(resolver=resolver).fetch_instructions(hook_server.url(host="hooks.test"), "POST", {})
    assert resolver.lookups == ["hooks.test"]
    assert hook_server.requests[0].headers["host"] == f"hooks.test:{hook_server.port}"


@pytest.mark.parametrize("ip", ["10.0.0.1", "::ffff:10.0.0.1", "100.64.0.1", "169.254.169.254",
                                "0.0.0.0", "192.168.1.1", "fd00:ec2::254", "fe80::1", "224.0.0.1"])
def test_given_hook_host_resolving_to_forbidden_address_when_fetching_then_refused_unsent(ip):
    resolver = StaticResolver({"hooks.test": ip})
    with pytest.raises(WebhookFailed) as caught:
        client(resolver=resolver).fetch_instructions("https://hooks.test/hook", "POST", {})
    assert caught.value.reason == Reason.UNSAFE and caught.value.attempts == 0
    assert resolver.lookups == ["hooks.test"]   # refused once, not retried


@pytest.mark.parametrize("url", ["http://[::1]:9/hook", "http://127.0.0.1:9/hook",
                                 "https://localhost.test/hook"])
def test_given_loopback_not_allowed_when_fetching_then_refused(url):
    resolver = StaticResolver({"localhost.test": "127.0.0.1"})
    with pytest.raises(WebhookFailed) as caught:
        client(resolver=resolver, allow_loopback=False).fetch_instructions(url, "POST", {})
    assert caught.value.reason == Reason.UNSAFE


def test_given_plain_http_to_public_host_when_fetching_then_refused_even_in_dev_mode():
    with pytest.raises(WebhookFailed) as caught:
        client(resolver=StaticResolver({"hooks.example.com": "93.184.215.14"})
               ).fetch_instructions("http://hooks.example.com/", "POST", {})
    assert caught.value.reason == Reason.UNSAFE


def test_given_dns_rebinding_when_retrying_then_one_lookup_and_every_attempt_hits_checked_address(
        hook_server):
    from tests.webhooks.helpers import RebindingResolver
    resolver = RebindingResolver({"rebind.test": ["127.0.0.1", "10.0.0.1"]})
    hook_server.reply(Reply(status=500), Reply(status=500), Reply.json([{"verb": "hangup"}]))
    verbs = client(resolver=resolver, retry_delays=(0.0, 0.0)).fetch_instructions(
        hook_server.url(host="rebind.test"), "POST", {})
    assert verbs == [{"verb": "hangup"}]
    assert resolver.lookups == ["rebind.test"]        # the second (private) answer never asked for
    assert len(hook_server.requests) == 3             # all three reached the checked address


def test_given_status_hook_when_posted_then_signed_post_and_body_ignored(hook_server):
    hook_server.reply(Reply(status=200, body=b"not json is fine here"))
    client().post_status(hook_server.url("/status"), {"callStatus": "completed"}, secret="s")
    [req] = hook_server.requests
    assert req.method == "POST" and req.path == "/status"
    assert verify(req.body, "s", req.headers["x-signature"])


def test_given_attempts_when_logged_then_host_status_elapsed_and_no_secrets(hook_server, caplog):
    import logging
    hook_server.reply(Reply(status=500), Reply.json([]))
    with caplog.at_level(logging.INFO, logger="app.webhooks"):
        client(retry_delays=(0.0,)).fetch_instructions(
            hook_server.url("/hook?token=tok123"), "POST", {"x": 1}, secret="whsec-SECRET",
            basic_auth=("u", "pw-SECRET"))
    lines = [r.getMessage() for r in caplog.records if r.name == "app.webhooks"]
    assert len(lines) == 2
    assert "attempt=1" in lines[0] and "status=500" in lines[0] and "elapsed_ms=" in lines[0]
    assert "host=127.0.0.1" in lines[0] and "outcome=ok" in lines[1]
    text = "\n".join(lines)
    assert "SECRET" not in text and "tok123" not in text


def test_given_unsupported_method_when_fetching_then_value_error():
    with pytest.raises(ValueError):
        client().fetch_instructions("https://hooks.test/", "DELETE", {})


def test_given_gzip_reply_despite_identity_when_fetching_then_not_inflated_and_rejected(hook_server):
    import gzip
    bomb = gzip.compress(b"[" + b" " * (4 * 1024 * 1024) + b"]")   # 4 MiB of JSON, ~4 KiB on the wire
    hook_server.reply(Reply(body=bomb, headers={"Content-Type": "application/json",
                                                "Content-Encoding": "gzip"}))
    with pytest.raises(WebhookFailed) as caught:
        client(attempts=1).fetch_instructions(hook_server.url(), "POST", {})
    assert caught.value.reason == Reason.INVALID_JSON
    assert hook_server.requests[0].headers["accept-encoding"] == "identity"


def test_given_name_resolving_to_ipv6_loopback_when_fetching_then_pinned_v6_connection_works():
    from tests.plugins.webhook_server import HookServer
    try:
        server = HookServer(listen="::1").start()
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    try:
        server.reply(Reply.json([{"verb": "hangup"}]))
        resolver = StaticResolver({"v6.test": "::1"})
        verbs = client(resolver=resolver).fetch_instructions(
            f"http://v6.test:{server.port}/hook", "POST", {})
        assert verbs == [{"verb": "hangup"}]
        assert server.requests[0].headers["host"] == f"v6.test:{server.port}"
    finally:
        server.stop()


def test_given_process_wide_client_when_requested_twice_then_same_instance_shares_pools():
    from app.webhooks import get_client
    assert get_client() is get_client()


def test_given_server_dripping_the_body_when_fetching_then_whole_attempt_budget_applies(hook_server):
    import gevent

    def drip():
        for _ in range(40):          # 4 s in total, never idle long enough for a read timeout
            gevent.sleep(0.1)  # scenario: one byte every 0.1 s
            yield b" "
        yield b"[]"

    hook_server.reply(Reply(body=drip))
    # Per-read timeouts alone would wait for the whole body and return []; the attempt budget
    # cuts it short.
    with pytest.raises(WebhookFailed) as caught:
        client(timeout=0.5, attempts=1).fetch_instructions(hook_server.url(), "POST", {})
    assert caught.value.reason == Reason.TIMEOUT


def test_given_proxy_environment_when_fetching_then_proxies_are_ignored(hook_server, monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")   # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert client().fetch_instructions(hook_server.url(host="hooks.test"), "POST", {}) == []
    assert len(hook_server.requests) == 1
