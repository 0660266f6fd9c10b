"""Every operation of /api/openapi.json declares its success response (one declared none) and
the error shape, so clients and the fuzzing run (tests/fuzz) can check every answer."""
from __future__ import annotations

import pytest

from app.api.app import create_app

DOCUMENT = create_app({"TESTING": True}).test_client().get("/api/openapi.json").get_json()
OPERATIONS = [(method.upper(), path, operation) for path, operations in DOCUMENT["paths"].items()
              for method, operation in operations.items() if method != "parameters"]


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS,
                         ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_given_operation_when_documented_then_success_and_error_shape_declared(method, path, operation):
    responses = operation["responses"]
    assert any(code.startswith("2") for code in responses), (method, path, sorted(responses))
    assert "default" in responses  # every other status answers in the error shape


def test_given_lcr_explain_when_documented_then_200_has_the_decision_schema():
    ok = DOCUMENT["paths"]["/api/lcr/explain"]["get"]["responses"]["200"]
    schema = ok["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/Explain")
    assert {"attempts", "skipped", "plan", "route", "gatewayHealthKnown"} <= set(
        DOCUMENT["components"]["schemas"]["Explain"]["properties"])
