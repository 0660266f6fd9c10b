"""LCR selection, table-driven from tests/fixtures/routing/lcr_world.json."""
from __future__ import annotations

import random
import uuid

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from app.errors import ValidationFailed
from app.routing.lcr import (
    compile_route_regex,
    compile_table,
    gateway_id_from_name,
    gateway_name,
    literal_prefix,
    normalize_number,
)
from app.routing.rows import CarrierEntryRow, CarrierRow, GatewayRow, PlanRow, RouteRow, RoutingRows
from tests.routing.world import build_rows, key_id, load_world, names_by_id

WORLD = load_world()
TABLE = compile_table(build_rows(WORLD))
NAMES = names_by_id(WORLD)


@pytest.mark.parametrize("case", WORLD["cases"], ids=[c["name"] for c in WORLD["cases"]])
def test_given_lcr_world_when_explaining_a_number_then_plan_route_and_try_order_match_the_case(case):
    down = frozenset(key_id(k) for k in case.get("down", []))
    result = TABLE.explain(case["number"], key_id(case["account"]), down)
    expect = case["expect"]

    if "plan" in expect:
        assert NAMES[result.plan_id] == expect["plan"]
    if "route" in expect:
        assert NAMES[result.route_id] == expect["route"]
    if "gateways" in expect:
        assert [NAMES[a.gateway_id] for a in result.attempts] == expect["gateways"]
    if "carriers" in expect:
        order = []
        for attempt in result.attempts:
            if NAMES[attempt.carrier_id] not in order:
                order.append(NAMES[attempt.carrier_id])
        assert order == expect["carriers"]
    if "prefix" in expect:
        assert result.attempts[0].dial_number == expect["prefix"] + result.normalized
    if "skipped" in expect:
        assert [[s.kind, NAMES[s.id]] for s in result.skipped] == expect["skipped"]
        assert all(s.reason for s in result.skipped)
    if "unroutable" in expect:
        assert not result.routable
        assert expect["unroutable"] in result.reason
    else:
        assert result.reason is None or not expect.get("gateways", True)


def test_given_number_with_plus_spaces_and_dashes_when_normalizing_then_digits_only():
    assert normalize_number("+1 (212) 555-0100") == "12125550100"
    assert normalize_number("00442079460000") == "00442079460000"
    assert normalize_number("sip:alice@example.com") is None
    assert normalize_number("") is None
    assert normalize_number("12a3") is None


@pytest.mark.parametrize("regex,prefix", [
    ("^1212\\d+", "1212"), ("1212", "1212"), ("^44(20|7)", "44"), ("^1?212", ""),
    ("^(1|44)", ""), ("\\d+", ""), ("^1[2-9]", "1"), ("^12*3", "1"), ("(?i)44", ""), ("12|34", ""),
])
def test_given_route_regex_when_extracting_literal_prefix_then_only_guaranteed_digits(regex, prefix):
    assert literal_prefix(regex) == prefix


def test_given_invalid_regex_when_compiling_then_validation_error_with_stable_code():
    with pytest.raises(ValidationFailed) as info:
        compile_route_regex("^(12")
    assert info.value.code == "invalid_route_regex"
    with pytest.raises(ValidationFailed):
        compile_route_regex("")


def test_given_a_route_with_a_broken_regex_in_the_db_when_compiling_then_it_is_left_out_and_reported():
    carrier = CarrierRow(uuid.uuid4(), "c")
    gw = GatewayRow(uuid.uuid4(), carrier.id, "198.51.100.1", outbound=True)
    plan = PlanRow(uuid.uuid4(), "p")
    bad = RouteRow(uuid.uuid4(), plan.id, "^(1", priority=0)
    good = RouteRow(uuid.uuid4(), plan.id, "^1", priority=5)
    entries = tuple(CarrierEntryRow(uuid.uuid4(), r.id, carrier.id) for r in (bad, good))
    table = compile_table(RoutingRows((carrier,), (gw,), (plan,), (bad, good), entries))
    assert table.explain("1555", None).route_id == good.id
    assert any(str(bad.id) in p for p in table.problems)


def test_given_gateway_id_when_naming_then_the_name_maps_back_to_the_id():
    gid = uuid.uuid4()
    assert gateway_id_from_name(gateway_name(gid)) == gid
    assert gateway_id_from_name("gw_up") is None
    assert gateway_id_from_name("external") is None


def _brute_force(rows: RoutingRows, number: str, account_id):
    """Reference: every active plan in precedence order, every route by rank, RE2 anchored match."""
    own = sorted([p for p in rows.plans if p.account_id == account_id and p.is_active],
                 key=lambda p: (p.priority, p.name, str(p.id)))
    platform = sorted([p for p in rows.plans if p.account_id is None and p.is_active
                       and p.service_provider_id is None],
                      key=lambda p: (p.priority, p.name, str(p.id)))
    for plan in own + platform:
        routes = sorted([r for r in rows.routes if r.lcr_id == plan.id],
                        key=lambda r: (r.priority, r.regex, str(r.id)))
        for route in routes:
            if re2.match(route.regex, number):
                return route.id
    return None


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), numbers=st.lists(st.from_regex(r"\A[0-9]{1,15}\Z"), min_size=5, max_size=20))
def test_given_random_plans_when_looking_up_then_prefix_index_agrees_with_brute_force(seed, numbers):
    rng = random.Random(seed)
    account = uuid.uuid4()
    carrier = CarrierRow(uuid.uuid4(), "c")
    plans = [PlanRow(uuid.uuid4(), f"p{i}", account if i < 2 else None, rng.randint(0, 3)) for i in range(4)]
    shapes = ["^{p}", "{p}", "^{p}\\d*$", "^{p}[0-9]{{2}}", "^({p}|9)", "^{p}?1", "\\d{{3}}", "^{p}.*"]
    routes = []
    for plan in plans:
        for _ in range(rng.randint(0, 12)):
            prefix = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 4)))
            routes.append(RouteRow(uuid.uuid4(), plan.id, rng.choice(shapes).format(p=prefix), rng.randint(0, 5)))
    entries = tuple(CarrierEntryRow(uuid.uuid4(), r.id, carrier.id) for r in routes)
    rows = RoutingRows((carrier,), (GatewayRow(uuid.uuid4(), carrier.id, "198.51.100.1", outbound=True),),
                       tuple(plans), tuple(routes), entries)
    table = compile_table(rows)
    for number in numbers:
        found = table.select(number, account)
        assert (found[1].route_id if found else None) == _brute_force(rows, number, account)


def test_given_routes_with_literal_prefixes_when_compiled_then_plan_index_is_keyed_by_regex_prefix():
    carrier = CarrierRow(uuid.uuid4(), "c", tech_prefix="99#")  # must not leak into the index
    gw = GatewayRow(uuid.uuid4(), carrier.id, "198.51.100.1", outbound=True)
    plan = PlanRow(uuid.uuid4(), "p")
    routes = [RouteRow(uuid.uuid4(), plan.id, rx) for rx in ("^1212", "44", "^(33|34)")]
    entries = tuple(CarrierEntryRow(uuid.uuid4(), r.id, carrier.id) for r in routes)
    table = compile_table(RoutingRows((carrier,), (gw,), (plan,), tuple(routes), entries))
    (compiled,) = table.plans_for(None)
    assert sorted(compiled.buckets) == ["", "1212", "44"]
    assert compiled.max_prefix == 4
    assert compiled.first_digits == frozenset({"1", "4"})
