"""LCR route regexes are tenant input that the router (and /api/lcr/explain) runs on the one
gevent hub. With Python's backtracking matcher ``^(1+)+$`` on 31 ones and a 2 took ~2^31 steps and
froze every tenant's calls, and a save-time heuristic could not recognise every such shape
(look-arounds, back-references got through). Routes now run on RE2, linear in the number's
length: such patterns are harmless, and what RE2 cannot compile is refused on save."""
from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from app import limits
from app.errors import ValidationFailed
from app.routing.lcr import compile_route_regex, compile_table
from app.routing.rows import CarrierEntryRow, CarrierRow, GatewayRow, PlanRow, RouteRow, RoutingRows
from tests.api_management.helpers import admin_client, assert_error

# Exponential for a backtracking matcher; linear for RE2. The number makes each one fail late.
BACKTRACKING = ["^(1+)+$", "^(1|11)+$", "^(\\d*)*9", "^(?:1{2,})+$", "^\\d*\\d*\\d*\\d*\\d*x",
                "^(1|1?)+$", "^((1+)+)+$"]
WORST_NUMBER = "1" * 31 + "2"
# Features with no linear-time implementation (or not RE2 syntax): refused on save.
UNSUPPORTED = ["^(?=1)1", "^(?!44)\\d+", "^(?<=1)2", "^(1)\\1", "^1\\Z", "^\\d{1001}"]
ORDINARY = ["^1212", "^44(20|7)", "^1[2-9]\\d{2}[2-9]\\d{6}$", "^(33|34)\\d{8,10}$", "^44\\d+", "^(1\\d)+"]


@pytest.mark.parametrize("regex", BACKTRACKING)
def test_given_backtracking_shaped_route_when_saved_then_accepted_and_explain_answers(api, seed, regex):
    """Without RE2 the explain below would run for minutes (pytest's timeout fails it)."""
    _tenant, client = admin_client(api, seed)
    plan = client.post("/api/lcr", json={"name": "plan"}).get_json()["id"]

    saved = client.post(f"/api/lcr/{plan}/routes", json={"regex": regex, "priority": 1})
    explained = client.get("/api/lcr/explain", query_string={"number": WORST_NUMBER})

    assert saved.status_code == 201, saved.get_json()
    assert explained.status_code == 200, explained.get_json()
    assert explained.get_json()["route"] is None


@pytest.mark.parametrize("regex", UNSUPPORTED)
def test_given_route_regex_re2_cannot_compile_when_saved_then_422_invalid_route_regex(api, seed, regex):
    _tenant, client = admin_client(api, seed)
    plan = client.post("/api/lcr", json={"name": "plan"}).get_json()["id"]

    response = client.post(f"/api/lcr/{plan}/routes", json={"regex": regex, "priority": 1})

    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "invalid_route_regex"
    assert "RE2" in response.get_json()["message"]
    assert client.get(f"/api/lcr/{plan}/routes").get_json() == []


@pytest.mark.parametrize("regex", UNSUPPORTED)
def test_given_unsupported_regex_written_around_the_api_when_router_compiles_then_left_out(regex):
    with pytest.raises(ValidationFailed):
        compile_route_regex(regex)
    carrier = CarrierRow(uuid.uuid4(), "c")
    plan = PlanRow(uuid.uuid4(), "p")
    route = RouteRow(uuid.uuid4(), plan.id, regex)
    table = compile_table(RoutingRows(
        (carrier,), (GatewayRow(uuid.uuid4(), carrier.id, "198.51.100.1", outbound=True),),
        (plan,), (route,), (CarrierEntryRow(uuid.uuid4(), route.id, carrier.id),)))
    assert table.route_count == 0 and any(str(route.id) in p for p in table.problems)


# docs/trunks.md: a route matches at the START of the digits ("regex prefix": 44 and ^44 alike)
PREFIX_SEMANTICS = [
    ("44", "442079460000", True), ("^44", "442079460000", True), ("44", "1442079460000", False),
    ("^44", "1442079460000", False), ("1212$", "1212", True), ("1212$", "12125", False),
    ("\\d{3}", "123456", True), ("(33|34)\\d+", "3412", True), ("(33|34)\\d+", "3512", False),
    ("^1[2-9]\\d{2}[2-9]\\d{6}$", "12125550100", True), ("^1[2-9]\\d{2}[2-9]\\d{6}$", "11125550100", False),
]


@pytest.mark.parametrize(("regex", "number", "matches"), PREFIX_SEMANTICS)
def test_given_route_regex_when_matched_by_re2_then_same_prefix_semantics_as_before(regex, number, matches):
    assert (compile_route_regex(regex).match(number) is not None) is matches
    assert (re.match(regex, number) is not None) is matches  # what routes meant with Python re


def test_given_route_regex_one_over_the_limit_when_saved_or_compiled_then_refused_everywhere(api, seed):
    """One figure (app.limits.ROUTE_REGEX_MAX_LENGTH) for the API, the router and the database:
    the router's compiler used to take up to 512 characters the API and the CHECK refuse."""
    _tenant, client = admin_client(api, seed)
    plan = client.post("/api/lcr", json={"name": "plan"}).get_json()["id"]
    longest, too_long = "1" * limits.ROUTE_REGEX_MAX_LENGTH, "1" * (limits.ROUTE_REGEX_MAX_LENGTH + 1)

    saved = client.post(f"/api/lcr/{plan}/routes", json={"regex": longest})
    refused = client.post(f"/api/lcr/{plan}/routes", json={"regex": too_long})

    assert saved.status_code == 201, saved.get_json()
    assert_error(refused, 422, "validation_failed")
    assert compile_route_regex(longest).match(longest) is not None
    with pytest.raises(ValidationFailed) as caught:
        compile_route_regex(too_long)
    assert caught.value.code == "invalid_route_regex"


def test_given_the_route_regex_limit_then_openapi_and_docs_state_the_same_figure(api_app):
    schema = api_app.test_client().get("/api/openapi.json").get_json()["components"]["schemas"]["RouteWrite"]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()

    assert (schema["properties"]["regex"]["minLength"], schema["properties"]["regex"]["maxLength"]) == (
        1, limits.ROUTE_REGEX_MAX_LENGTH)
    assert f"RE2 syntax, 1–{limits.ROUTE_REGEX_MAX_LENGTH} characters" in docs
