import ipaddress

import pytest

from app.webhooks import address_policy
from tests.webhooks.helpers import load

REFUSED = load("addresses_refused.json")
PUBLIC = load("addresses_public.json")


@pytest.mark.parametrize("row", REFUSED, ids=[r["ip"] for r in REFUSED])
def test_given_non_public_address_when_classified_then_refusal_class_is_named(row):
    assert address_policy.classify(ipaddress.ip_address(row["ip"])) == row["class"]


@pytest.mark.parametrize("ip", PUBLIC)
def test_given_public_unicast_address_when_classified_then_it_is_allowed(ip):
    assert address_policy.classify(ipaddress.ip_address(ip)) is None


@pytest.mark.parametrize("row", REFUSED, ids=[r["ip"] for r in REFUSED])
def test_given_loopback_mode_when_checking_then_only_loopback_is_admitted(row):
    verdict = address_policy.refusal(ipaddress.ip_address(row["ip"]), allow_loopback=True)
    if row["class"] == address_policy.LOOPBACK:
        assert verdict is None
    else:
        assert verdict == row["class"]


def test_given_scoped_ipv6_address_when_classified_then_it_is_link_local():
    assert address_policy.classify(ipaddress.ip_address("fe80::1%eth0")) == "link_local"


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st

ipv4 = st.integers(min_value=0, max_value=2**32 - 1).map(ipaddress.IPv4Address)


@given(ipv4)
def test_given_any_ipv4_when_embedded_in_ipv6_then_judged_like_the_ipv4(address):
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(address))
    expected = address_policy.classify(address)
    assert address_policy.classify(mapped) == expected
    assert address_policy.classify(nat64) == expected


@given(ipv4)
def test_given_any_ipv4_when_allowed_then_python_also_considers_it_global(address):
    if address_policy.classify(address) is None:
        assert address.is_global and not address.is_private and not address.is_loopback
