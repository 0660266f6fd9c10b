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
