"""One error shape everywhere, and the OpenAPI document."""
from __future__ import annotations

import pytest

from app.api.app import create_app
from app.errors import Conflict


@pytest.fixture
def crashing_app(database):
    """A separate app instance with test-only routes that fail in the two ways views can fail."""
    app = create_app({"TESTING": True})

    def explode():
        raise RuntimeError("db password is hunter2")  # must never reach the client

    def conflict():
        raise Conflict("Already there.", code="duplicate_thing", details={"field": "name"})

    app.add_url_rule("/__test__/explode", "explode", explode)
    app.add_url_rule("/__test__/conflict", "conflict", conflict)
    return app


def _assert_shape(body: dict) -> None:
    assert set(body) <= {"code", "message", "details"}
    assert isinstance(body["code"], str) and isinstance(body["message"], str)


def test_given_an_unknown_route_when_called_then_404_in_the_error_shape(api):
    response = api.anonymous("acme.localhost").get("/no/such/path")
    assert response.status_code == 404 and response.is_json
    _assert_shape(response.get_json())
    assert response.get_json()["code"] == "not_found"


def test_given_a_wrong_method_when_called_then_405_in_the_error_shape_with_allow(api):
    response = api.anonymous("acme.localhost").get("/auth/login")
    assert response.status_code == 405
    assert response.get_json()["code"] == "method_not_allowed"
    assert "POST" in response.headers["Allow"]


def test_given_malformed_json_when_posted_then_400_invalid_json(api):
    response = api.anonymous("acme.localhost").post(
        "/auth/login", data="{not json", content_type="application/json")
    assert response.status_code == 400
    _assert_shape(response.get_json())
    assert response.get_json()["code"] == "invalid_json"


def test_given_an_oversized_body_when_posted_then_413_in_the_error_shape(api):
    response = api.anonymous("acme.localhost").post(
        "/auth/login", data="x" * (1024 * 1024 + 1), content_type="application/json")
    assert response.status_code == 413
    assert response.get_json()["code"] == "payload_too_large"


def test_given_an_unhandled_exception_when_a_view_crashes_then_500_without_trace_or_secret(crashing_app):
    response = crashing_app.test_client().get("/__test__/explode")
    assert response.status_code == 500
    assert response.get_json() == {"code": "internal_error", "message": "Internal error. It has been logged."}
    text = response.get_data(as_text=True)
    assert "hunter2" not in text and "Traceback" not in text and "RuntimeError" not in text


def test_given_a_domain_error_when_raised_in_a_view_then_its_status_code_and_details_are_returned(crashing_app):
    response = crashing_app.test_client().get("/__test__/conflict")
    assert response.status_code == 409
    assert response.get_json() == {"code": "duplicate_thing", "message": "Already there.",
                                   "details": {"field": "name"}}


def test_given_no_token_when_fetching_the_openapi_document_then_it_lists_the_core_paths(api):
    response = api.anonymous("acme.localhost").get("/api/openapi.json")
    assert response.status_code == 200
    doc = response.get_json()
    assert doc["openapi"].startswith("3.")
    for path in ("/auth/login", "/auth/refresh", "/auth/logout", "/auth/exchange",
                 "/api/api-keys", "/api/api-keys/{api_key_id}",
                 "/api/queues/{queue_id}/callbacks", "/api/queues/{queue_id}/callbacks/{callback_id}"):
        assert path in doc["paths"], path
    assert doc["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert doc["security"] == [{"bearerAuth": []}, {"apiKeyAuth": []}]
    assert doc["components"]["securitySchemes"]["apiKeyAuth"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert doc["paths"]["/auth/refresh"]["post"]["security"] == [{"bearerAuth": []}]
    assert doc["paths"]["/auth/login"]["post"]["security"] == []
    assert set(doc["components"]["schemas"]["Error"]["properties"]) == {"code", "message", "details"}


def test_given_the_openapi_document_when_reading_api_operations_then_401_and_403_are_documented(api):
    doc = api.anonymous("acme.localhost").get("/api/openapi.json").get_json()
    create = doc["paths"]["/api/api-keys"]["post"]
    assert create["responses"]["401"] == {"$ref": "#/components/responses/UNAUTHORIZED"}
    assert create["responses"]["403"] == {"$ref": "#/components/responses/FORBIDDEN"}
    assert "api_keys.create" in create["description"] and "api-access" in create["description"]
    # login takes no token: its 401 is its own answer (wrong password, second factor needed),
    # not the bearer-token refusal every /api/ operation documents
    login_401 = doc["paths"]["/auth/login"]["post"]["responses"]["401"]
    assert login_401 != {"$ref": "#/components/responses/UNAUTHORIZED"}
    assert "invalid_credentials" in login_401["description"] and "mfa_required" in login_401["description"]
    assert "401" in doc["paths"]["/auth/exchange"]["post"]["responses"]
    error_ref = {"$ref": "#/components/schemas/Error"}
    assert doc["components"]["responses"]["UNAUTHORIZED"]["content"]["application/json"]["schema"] == error_ref


def test_given_the_openapi_document_when_reading_live_call_actions_then_every_error_answer_and_409_code_is_documented(api):
    doc = api.anonymous("acme.localhost").get("/api/openapi.json").get_json()
    responses = doc["paths"]["/api/calls/{call_id}/actions"]["post"]["responses"]
    error_ref = {"$ref": "#/components/schemas/Error"}

    assert {"200", "401", "403", "404", "409", "422", "503"} <= set(responses)
    for status in ("404", "409", "503"):
        assert responses[status]["content"]["application/json"]["schema"] == error_ref, status
    assert "call_not_found" in responses["404"]["description"]
    assert "call_control_unavailable" in responses["503"]["description"]
    for code in ("call_ending", "call_not_answered", "call_not_bridged", "already_recording", "not_recording",
                 "call_not_with_agent", "transfer_to_self", "transfer_target_not_found", "caller_id_not_owned",
                 "transfer_needs_queue", "not_consulting", "consult_not_answered"):
        assert code in responses["409"]["description"], code
