"""Tenant resolution from the Host header (pure function, no database)."""
from __future__ import annotations

import pytest

from app.api.tenancy import tenant_from_host


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("acme.localhost:8080", "acme"),
        ("acme.localhost", "acme"),
        ("ACME.LocalHost", "acme"),
        ("acme.localhost.", "acme"),
        ("a-1.localhost", "a-1"),
    ],
)
def test_given_a_host_under_the_base_domain_when_resolving_then_the_subdomain_is_the_tenant(host, expected):
    assert tenant_from_host(host, "localhost") == expected


@pytest.mark.parametrize(
    "host",
    [
        "localhost",              # bare base domain: no tenant
        "localhost:8080",
        "a.b.localhost",          # nested labels are never a tenant
        "acme.example.com",       # another domain
        "acmelocalhost",          # suffix without the dot
        "-acme.localhost",        # not a DNS label
        "acme_.localhost",
        "[::1]:8080",
        "",
    ],
)
def test_given_a_host_that_names_no_tenant_when_resolving_then_none(host):
    assert tenant_from_host(host, "localhost") is None


def test_given_a_multi_label_base_domain_when_resolving_then_only_one_label_in_front_counts():
    assert tenant_from_host("acme.sbc.example.com:443", "sbc.example.com") == "acme"
    assert tenant_from_host("x.acme.sbc.example.com", "sbc.example.com") is None
