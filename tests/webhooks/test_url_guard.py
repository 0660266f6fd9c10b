import pytest

from app.errors import UnsafeUrl
from app.webhooks.resolver import StaticResolver
from app.webhooks.url_guard import WS, check_url_on_save, guard, resolve_public
from tests.webhooks.helpers import load

RESOLVER = StaticResolver({
    "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "internal.example.com": "10.20.30.40",
    "mixed.example.com": ["93.184.215.14", "192.168.1.5"],
    "localhost": "127.0.0.1",
})
REFUSED = load("urls_refused_on_save.json")
ACCEPTED = load("urls_accepted_on_save.json")


@pytest.mark.parametrize("row", REFUSED, ids=[r["why"] for r in REFUSED])
def test_given_unsafe_url_when_saved_then_unsafe_url_with_reason(row):
    with pytest.raises(UnsafeUrl) as caught:
        check_url_on_save(row["url"], resolver=RESOLVER, allow_loopback=False)
    assert caught.value.details["reason"] == row["reason"]
    assert caught.value.status == 422 and caught.value.code == "unsafe_url"
    assert caught.value.message.startswith("URL ") or "credentials" in caught.value.message


@pytest.mark.parametrize("row", ACCEPTED, ids=[r["url"] for r in ACCEPTED])
def test_given_public_https_url_when_saved_then_accepted(row):
    check_url_on_save(row["url"], allow_ws=row["allow_ws"], resolver=RESOLVER,
                      allow_loopback=False)


def test_given_refusal_when_reported_then_resolved_address_is_not_disclosed():
    with pytest.raises(UnsafeUrl) as caught:
        check_url_on_save("https://internal.example.com/", resolver=RESOLVER, allow_loopback=False)
    assert "10.20.30.40" not in caught.value.message
    assert "10.20.30.40" not in str(caught.value.to_dict())


@pytest.mark.parametrize("url", ["https://[::1]/hook", "https://127.0.0.1/hook",
                                 "https://localhost/hook"])
def test_given_loopback_not_allowed_when_saved_then_refused(url):
    with pytest.raises(UnsafeUrl) as caught:
        check_url_on_save(url, resolver=RESOLVER, allow_loopback=False)
    assert caught.value.details["reason"] == "loopback"


def test_given_loopback_dev_mode_when_saved_then_loopback_and_plain_http_to_it_accepted():
    check_url_on_save("https://localhost/hook", resolver=RESOLVER, allow_loopback=True)
    check_url_on_save("http://127.0.0.1:8080/hook", resolver=RESOLVER, allow_loopback=True)
    check_url_on_save("ws://[::1]:9000/ws", allow_ws=True, resolver=RESOLVER, allow_loopback=True)


def test_given_loopback_dev_mode_when_private_or_plain_http_public_then_still_refused():
    for url, reason in [("https://10.0.0.1/", "private"),
                        ("https://169.254.169.254/", "metadata"),
                        ("http://hooks.example.com/", "scheme")]:
        with pytest.raises(UnsafeUrl) as caught:
            check_url_on_save(url, resolver=RESOLVER, allow_loopback=True)
        assert caught.value.details["reason"] == reason


def test_given_settings_flag_when_no_override_then_environment_setting_applies(monkeypatch):
    from app.settings import get_settings
    get_settings.cache_clear()
    monkeypatch.setenv("SBC_ALLOW_LOOPBACK_WEBHOOKS", "0")
    try:
        with pytest.raises(UnsafeUrl):
            check_url_on_save("https://127.0.0.1/", resolver=RESOLVER)
        get_settings.cache_clear()
        monkeypatch.setenv("SBC_ALLOW_LOOPBACK_WEBHOOKS", "1")
        check_url_on_save("https://127.0.0.1/", resolver=RESOLVER)
    finally:
        get_settings.cache_clear()


def test_given_request_time_guard_when_host_resolves_then_destination_pins_first_checked_address():
    resolver = StaticResolver({"hooks.example.com": ["93.184.215.14", "1.1.1.1"]})
    dest = guard("https://Hooks.Example.com:8443/a?b=1", resolver=resolver, allow_loopback=False)
    assert str(dest.ip) == "93.184.215.14"
    assert dest.host == "hooks.example.com" and dest.port == 8443 and dest.target == "/a?b=1"
    assert dest.host_header == "hooks.example.com:8443"
    assert resolver.lookups == ["hooks.example.com"]


@pytest.mark.parametrize("url, kind", [("https://hooks.example.com:0/next", "http"),
                                       ("wss://hooks.example.com:0/call", WS)])
def test_given_port_0_when_used_at_request_time_then_refused_never_the_default_port(url, kind):
    with pytest.raises(UnsafeUrl) as caught:
        guard(url, kind=kind, resolver=RESOLVER, allow_loopback=False)
    assert caught.value.code == "unsafe_url" and caught.value.details["reason"] == "invalid_port"


def test_given_ws_kind_when_https_url_then_refused_and_wss_accepted():
    with pytest.raises(UnsafeUrl):
        guard("https://hooks.example.com/", kind=WS, resolver=RESOLVER, allow_loopback=False)
    assert guard("wss://hooks.example.com/", kind=WS, resolver=RESOLVER,
                 allow_loopback=False).port == 443


def test_given_resolve_public_when_metadata_name_then_refused_without_lookup():
    resolver = StaticResolver({"metadata.google.internal": "8.8.8.8"})
    with pytest.raises(UnsafeUrl):
        resolve_public("metadata.google.internal", resolver=resolver, allow_loopback=False)
    assert resolver.lookups == []


def test_given_default_resolver_installed_when_no_explicit_resolver_then_it_is_used(webhook_dns):
    check_url_on_save("https://hooks.example.com/call", allow_loopback=False)
    with pytest.raises(UnsafeUrl) as caught:
        check_url_on_save("https://internal.example.com/call", allow_loopback=False)
    assert caught.value.details["reason"] == "private"
    webhook_dns.add("late.example.com", "172.16.0.9")
    with pytest.raises(UnsafeUrl):
        check_url_on_save("https://late.example.com/", allow_loopback=False)
    assert webhook_dns.lookups == ["hooks.example.com", "internal.example.com", "late.example.com"]
