"""The inbound ACL from the gateways table, and carrier identification by source IP."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.routing.acl import CarrierIdentifier, build_acl, render_acl_nodes
from tests.routing.world import build_rows, key_id, load_world, names_by_id

WORLD = load_world("acl_gateways.json")
ROWS = build_rows(WORLD)
NAMES = names_by_id(WORLD)
ENTRIES, REJECTED = build_acl(ROWS.gateways, ROWS.carriers)


def test_given_gateways_when_building_acl_then_only_active_inbound_ipv4_of_active_carriers_are_allowed():
    assert sorted(str(e.network) for e in ENTRIES) == sorted(WORLD["expected_cidrs"])


def test_given_cidr_with_host_bits_when_building_acl_then_network_address_is_used():
    entry = next(e for e in ENTRIES if e.gateway_id == key_id("bravo_host_bits"))
    assert str(entry.network) == "203.0.113.64/28"


def test_given_ipv6_or_too_wide_gateway_when_building_acl_then_rejected_with_reason():
    assert sorted(NAMES[r.gateway_id] for r in REJECTED) == sorted(WORLD["expected_rejected"])
    assert all(r.reason for r in REJECTED)


def test_given_acl_entries_when_rendering_then_freeswitch_include_with_allow_nodes():
    xml = render_acl_nodes(ENTRIES)
    root = ET.fromstring(xml)
    assert root.tag == "include"
    nodes = root.findall("node")
    assert {n.get("type") for n in nodes} == {"allow"}
    assert sorted(n.get("cidr") for n in nodes) == sorted(WORLD["expected_cidrs"])
    # FreeSWITCH's preprocessor drops <include> lines, so the wrapper must be on its own line
    assert xml.splitlines()[0] == "<include>" and xml.splitlines()[-1] == "</include>"


def test_given_no_gateways_when_rendering_then_empty_list_denies_everyone():
    root = ET.fromstring(render_acl_nodes([]))
    assert root.findall("node") == []


def test_given_duplicate_networks_when_rendering_then_each_cidr_once():
    xml = render_acl_nodes(ENTRIES + ENTRIES)
    assert xml.count("198.51.100.10/32") == 1


@pytest.mark.parametrize("probe", WORLD["identify"], ids=[p["ip"] or "empty" for p in WORLD["identify"]])
def test_given_source_ip_when_identifying_then_longest_prefix_gateway_and_its_carrier(probe):
    found = CarrierIdentifier(ENTRIES).identify(probe["ip"])
    if probe["gateway"] is None:
        assert found is None
    else:
        carrier_id, gateway_id = found
        assert NAMES[gateway_id] == probe["gateway"]
        gateway = next(g for g in ROWS.gateways if g.id == gateway_id)
        assert carrier_id == gateway.carrier_id


def test_given_two_gateways_on_the_same_network_when_identifying_then_same_answer_every_time():
    twice = ENTRIES + [type(ENTRIES[0])(ENTRIES[0].network, key_id("bravo"), key_id("zzz"))]
    twice.sort(key=lambda e: (int(e.network.network_address), e.network.prefixlen, str(e.gateway_id)))
    first = CarrierIdentifier(twice).identify(str(ENTRIES[0].network.network_address))
    again = CarrierIdentifier(list(reversed(twice))).identify(str(ENTRIES[0].network.network_address))
    assert first == again
    assert first[1] == min((ENTRIES[0].gateway_id, key_id("zzz")), key=str)


def test_given_tenant_private_trunk_when_identifying_for_another_account_then_it_does_not_count():
    import uuid as _uuid

    from app.routing.rows import CarrierRow, GatewayRow

    tenant_a, tenant_b = _uuid.uuid4(), _uuid.uuid4()
    platform = CarrierRow(_uuid.uuid4(), "platform", None)
    private_a = CarrierRow(_uuid.uuid4(), "a-private", tenant_a)
    gateways = [
        GatewayRow(_uuid.uuid4(), platform.id, "198.51.0.0", 16),
        GatewayRow(_uuid.uuid4(), private_a.id, "198.51.100.10", 32),
        GatewayRow(_uuid.uuid4(), private_a.id, "203.0.113.5", 32),
    ]
    entries, _ = build_acl(gateways, [platform, private_a])
    ident = CarrierIdentifier(entries)
    assert ident.identify("198.51.100.10", tenant_a)[0] == private_a.id      # most specific, own
    assert ident.identify("198.51.100.10", tenant_b)[0] == platform.id       # falls back to platform
    assert ident.identify("203.0.113.5", tenant_b) is None                   # only A's trunk there
    assert ident.identify("203.0.113.5")[0] == private_a.id                  # unscoped lookup
