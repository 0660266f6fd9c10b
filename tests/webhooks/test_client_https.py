"""TLS: connect to the checked address, verify the certificate against the ORIGINAL host name."""
import pytest

from app.webhooks import Reason, StaticResolver, WebhookClient, WebhookFailed
from app.webhooks.signing import verify
from tests.plugins.webhook_server import Reply


def https_client(tls_ca, **kw) -> WebhookClient:
    kw.setdefault("resolver", StaticResolver({"hooks.test": "127.0.0.1",
                                              "other.test": "127.0.0.1"}))
    kw.setdefault("allow_loopback", True)
    kw.setdefault("retry_delays", (0.0, 0.0))
    return WebhookClient(ca_bundle=tls_ca.ca_file, **kw)


def test_given_cert_for_hook_host_when_resolved_via_stub_to_loopback_then_https_succeeds(
        tls_ca, https_hook_server):
    server = https_hook_server(["hooks.test"])
    server.reply(Reply.json([{"verb": "say", "text": "secure"}]))
    verbs = https_client(tls_ca).fetch_instructions(server.url(host="hooks.test"), "POST",
                                                    {"callId": "c"}, secret="k")
    assert verbs == [{"verb": "say", "text": "secure"}]
    [req] = server.requests
    assert req.headers["host"] == f"hooks.test:{server.port}"
    assert server.sni == ["hooks.test"]   # SNI carries the original name, not 127.0.0.1
    assert verify(req.body, "k", req.headers["x-signature"])


def test_given_cert_for_another_name_when_connecting_then_tls_failure_and_nothing_sent(
        tls_ca, https_hook_server):
    server = https_hook_server(["other.test"])
    with pytest.raises(WebhookFailed) as caught:
        https_client(tls_ca).fetch_instructions(server.url(host="hooks.test"), "POST", {})
    assert caught.value.reason == Reason.TLS and caught.value.attempts == 3
    assert server.requests == []


def test_given_cert_for_ip_only_when_url_uses_name_then_hostname_check_fails(
        tls_ca, https_hook_server):
    # Proves the check uses the URL's host, not the address we connected to.
    server = https_hook_server(["127.0.0.1"])
    with pytest.raises(WebhookFailed) as caught:
        https_client(tls_ca, attempts=1).fetch_instructions(server.url(host="hooks.test"), "POST", {})
    assert caught.value.reason == Reason.TLS
    assert server.requests == []


def test_given_untrusted_ca_when_connecting_then_tls_failure(tls_ca, https_hook_server, tmp_path):
    from tests.plugins.webhook_server import LocalCA
    server = https_hook_server(["hooks.test"])
    stranger = LocalCA(tmp_path)
    client = WebhookClient(ca_bundle=stranger.ca_file, allow_loopback=True, attempts=1,
                           resolver=StaticResolver({"hooks.test": "127.0.0.1"}))
    with pytest.raises(WebhookFailed) as caught:
        client.fetch_instructions(server.url(host="hooks.test"), "POST", {})
    assert caught.value.reason == Reason.TLS


def test_given_keep_alive_pool_when_fetching_twice_then_both_requests_verified(
        tls_ca, https_hook_server):
    server = https_hook_server(["hooks.test"])
    client = https_client(tls_ca)
    for _ in range(2):
        assert client.fetch_instructions(server.url(host="hooks.test"), "POST", {}) == []
    assert len(server.requests) == 2
    client.close()
