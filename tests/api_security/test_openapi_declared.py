"""Every operation of /api/openapi.json declares its success response (one declared none) and
the error shape, so clients and the fuzzing run (tests/fuzz) can check every answer."""
from __future__ import annotations

import pytest

from app import limits
from app.api.app import create_app

DOCUMENT = create_app({"TESTING": True}).test_client().get("/api/openapi.json").get_json()
OPERATIONS = [(method.upper(), path, operation) for path, operations in DOCUMENT["paths"].items()
              for method, operation in operations.items() if method != "parameters"]


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS,
                         ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_given_operation_when_documented_then_success_and_error_shape_declared(method, path, operation):
    responses = operation["responses"]
    # a success is 2xx, or the 302 of an operation whose answer is a redirect (GET /auth/sso/start
    # sends the browser to the identity provider)
    assert any(code.startswith("2") or code == "302" for code in responses), (method, path, sorted(responses))
    assert "default" in responses  # every other status answers in the error shape


def test_given_lcr_explain_when_documented_then_200_has_the_decision_schema():
    ok = DOCUMENT["paths"]["/api/lcr/explain"]["get"]["responses"]["200"]
    schema = ok["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/Explain")
    assert {"attempts", "skipped", "plan", "route", "gatewayHealthKnown"} <= set(
        DOCUMENT["components"]["schemas"]["Explain"]["properties"])


def _integers(schema: dict, where: str, seen: frozenset = frozenset()):
    """(where, schema) of every integer a request may carry, following $refs once."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            yield from _integers(DOCUMENT["components"]["schemas"][name], f"{where}>{name}", seen | {name})
        return
    if schema.get("type") == "integer":
        yield where, schema
    for key, child in (schema.get("properties") or {}).items():
        if not child.get("readOnly"):
            yield from _integers(child, f"{where}.{key}", seen)
    if "items" in schema:
        yield from _integers(schema["items"], f"{where}[]", seen)


REQUEST_INTEGERS = [
    found
    for method, path, operation in OPERATIONS
    for source in ([(f"{method} {path} ?{p['name']}", p.get("schema", {})) for p in operation.get("parameters", [])]
                   + [(f"{method} {path} body", c["schema"])
                      for c in (operation.get("requestBody") or {}).get("content", {}).values()])
    for found in _integers(source[1], source[0])
]


@pytest.mark.parametrize(("where", "schema"), REQUEST_INTEGERS, ids=[w for w, _ in REQUEST_INTEGERS])
def test_given_integer_a_request_may_carry_when_documented_then_it_is_bounded(where, schema):
    """An unbounded integer field let 2**40 reach an ``integer`` SQL function (a 500)."""
    assert "maximum" in schema and schema["maximum"] <= limits.PG_INTEGER_MAX, where
