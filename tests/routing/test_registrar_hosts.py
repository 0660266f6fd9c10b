"""A registrar known only by host name (issue 25): the ACL admits the addresses its name
resolves to, checked at use like a webhook's (public IPv4; loopback only in the test mode),
and follows DNS when the name moves."""
from __future__ import annotations

import uuid

from app.routing.acl import CarrierIdentifier, build_acl, render_acl_nodes
from app.routing.cache import RoutingCache
from app.routing.registrar_hosts import RegistrarRefresher, resolve_registrars
from app.routing.rows import CarrierRow, GatewayRow, RoutingRows
from app.webhooks.resolver import StaticResolver

CARRIER = uuid.UUID(int=1)
PUBLIC_A, PUBLIC_B = "93.184.216.34", "93.184.216.35"  # public unicast (no traffic: a static map)


def _registrar(host: str = "sip.carrier.example", register: bool = True) -> GatewayRow:
    return GatewayRow(uuid.UUID(int=7), CARRIER, "", inbound=False, outbound=True, host=host, register=register,
                      register_username="u", register_password="p")


def _resolve(mapping: dict, loopback: bool = False, gateway: GatewayRow | None = None) -> dict:
    return resolve_registrars([gateway or _registrar()], StaticResolver(mapping), allow_loopback=loopback)


def test_given_a_host_name_registrar_then_each_public_ipv4_address_it_resolves_to_is_admitted():
    registrars = _resolve({"sip.carrier.example": [PUBLIC_B, PUBLIC_A, "2606:2800:220:1::1"]})
    assert registrars == {"sip.carrier.example": (PUBLIC_A, PUBLIC_B)}  # the ACL is IPv4 only
    entries, rejected = build_acl([_registrar()], [CarrierRow(CARRIER, "Registrar")], registrars)
    assert rejected == [] and [str(e.network) for e in entries] == [f"{PUBLIC_A}/32", f"{PUBLIC_B}/32"]
    assert f'cidr="{PUBLIC_A}/32"' in render_acl_nodes(entries)
    # admitted, never used to name a carrier by address: its calls name their gateway
    assert CarrierIdentifier(entries).identify(PUBLIC_A) is None


def test_given_a_registrar_name_that_maps_to_a_private_address_then_it_admits_nothing():
    assert _resolve({"sip.carrier.example": [PUBLIC_A, "10.1.2.3"]}) == {"sip.carrier.example": ()}
    assert _resolve({"sip.carrier.example": "169.254.169.254"}) == {"sip.carrier.example": ()}


def test_given_loopback_then_only_the_test_mode_admits_it():
    assert _resolve({"localhost": "127.0.0.1"}, gateway=_registrar("localhost")) == {"localhost": ()}
    assert _resolve({"localhost": "127.0.0.1"}, loopback=True, gateway=_registrar("localhost")) == \
        {"localhost": ("127.0.0.1",)}


def test_given_a_name_that_does_not_resolve_then_it_admits_nothing():
    assert _resolve({}) == {"sip.carrier.example": ()}


def test_given_a_host_name_gateway_that_does_not_register_then_it_is_not_resolved():
    resolver = StaticResolver({"sip.carrier.example": PUBLIC_A})
    assert resolve_registrars([_registrar(register=False)], resolver, allow_loopback=False) == {}
    assert resolver.lookups == []


def test_given_the_registrar_moves_when_the_refresher_runs_then_the_acl_is_rebuilt_with_the_new_address():
    resolver = StaticResolver({"sip.carrier.example": PUBLIC_A})
    rows = RoutingRows(carriers=(CarrierRow(CARRIER, "Registrar"),), gateways=(_registrar(),))
    cache = RoutingCache(loader=lambda: rows, resolver=resolver)
    cache.table()
    synced: list[int] = []
    refresher = RegistrarRefresher(lambda: cache.table().registrars, cache.resolve_registrars,
                                   lambda: synced.append(1) or cache.reload())
    assert refresher.refresh() is False and synced == []  # DNS unchanged: nothing to do
    resolver.add("sip.carrier.example", PUBLIC_B)
    assert refresher.refresh() is True and synced == [1]
    assert [str(e.network) for e in cache.table().acl_entries] == [f"{PUBLIC_B}/32"]
