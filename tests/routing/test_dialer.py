"""The session's entry point for phone targets: cached snapshot + live health -> bridge string."""
from __future__ import annotations

import uuid

import pytest
import redis

from app.routing.cache import RoutingCache
from app.routing.dialer import LcrDialer, NoRoute
from app.routing.gateway_health import GatewayHealth
from app.verbs.dial import split_global_vars
from tests.routing.world import build_rows, key_id, load_world

ROWS = build_rows(load_world())


@pytest.fixture()
def dialer(redis_client, redis_prefix):
    health = GatewayHealth(redis_client, f"{redis_prefix}{uuid.uuid4().hex[:6]}:", lambda *a, **k: None)
    return LcrDialer(RoutingCache(loader=lambda: ROWS), health), health


def test_given_route_when_dialling_then_bridge_string_and_verb_can_lift_its_globals(dialer):
    lcr, _ = dialer
    dial = lcr.bridge_string("+13105550100", key_id("acme"))
    globals_, legs = split_global_vars(dial)
    assert globals_.startswith("fail_on_single_reject=")
    assert legs.count("|") == 3 and legs.startswith("[lcr_carrier_id=")


def test_given_down_gateway_in_redis_when_dialling_then_it_is_not_in_the_string(dialer):
    lcr, health = dialer
    health.set_state(key_id("bravo_1"), "down")
    assert f"gw_{key_id('bravo_1').hex}" not in lcr.bridge_string("13105550100", key_id("acme"))


def test_given_no_route_when_dialling_then_typed_error_with_reason(dialer):
    lcr, health = dialer
    health.set_state(key_id("charlie_1"), "down")
    with pytest.raises(NoRoute) as info:
        lcr.bridge_string("5511999990000", key_id("globex"))
    assert info.value.code == "no_route" and info.value.details["reason"]


def test_given_redis_unreachable_when_dialling_then_dials_without_health():
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    lcr = LcrDialer(RoutingCache(loader=lambda: ROWS), GatewayHealth(dead, "x:", lambda *a, **k: None))
    assert "sofia/gateway/" in lcr.bridge_string("13105550100", key_id("acme"))
