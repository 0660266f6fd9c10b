"""LCR route regexes are tenant input that the router (and /api/lcr/explain) runs with Python's
backtracking matcher on the one gevent hub: ``^(1+)+$`` on 31 ones and a 2 takes ~2^31 steps and
freezes every tenant's calls. Such patterns are refused on save and skipped by the router."""
from __future__ import annotations

import pytest

from app.errors import ValidationFailed
from app.routing.lcr import compile_route_regex
from tests.api_management.helpers import admin_client

CATASTROPHIC = ["^(1+)+$", "^(1|11)+$", "^(\\d*)*9", "^(?:1{2,})+$", "^\\d*\\d*\\d*\\d*\\d*x"]
ORDINARY = ["^1212", "^44(20|7)", "^1[2-9]\\d{2}[2-9]\\d{6}$", "^(33|34)\\d{8,10}$", "^44\\d+", "^(1\\d)+"]


@pytest.mark.parametrize("regex", CATASTROPHIC)
def test_given_backtracking_route_regex_when_saved_then_422_invalid_route_regex(api, seed, regex):
    _tenant, client = admin_client(api, seed)
    plan = client.post("/api/lcr", json={"name": "plan"}).get_json()["id"]

    response = client.post(f"/api/lcr/{plan}/routes", json={"regex": regex, "priority": 1})

    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "invalid_route_regex"
    assert client.get(f"/api/lcr/{plan}/routes").get_json() == []


@pytest.mark.parametrize("regex", CATASTROPHIC)
def test_given_backtracking_regex_when_router_compiles_it_then_refused(regex):
    with pytest.raises(ValidationFailed):
        compile_route_regex(regex)


@pytest.mark.parametrize("regex", ORDINARY)
def test_given_ordinary_route_regex_when_compiled_then_accepted(regex):
    assert compile_route_regex(regex).pattern == regex
