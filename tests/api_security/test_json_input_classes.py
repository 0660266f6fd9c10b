"""Odd but valid input must answer 4xx in the JSON error shape, never 500, never a traceback in
the log: lone UTF-16 surrogates, deep nesting, numbers and timezone offsets Python accepts and
PostgreSQL refuses, huge offsets/limits, cursors carrying odd bytes, OPTIONS on /api/ paths —
anonymous /auth/login included, whose throttle still counts the refused attempt."""
from __future__ import annotations

import base64
import json
import logging
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DataError

from app import limits
from app.accounts.login_throttle import ADDRESS_FAILURE_LIMIT
from app.api.errors import handle_data_error
from app.exports.call_records import ACTION_FAILED, ACTION_STARTED, ExportRequest, stream_export
from app.exports.filters import CallRecordFilters
from tests.api_management.helpers import admin_client

JSON = "application/json"


def _cursor(values) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def _assert_4xx_shape(response, status: int | None = None) -> dict:
    body = response.get_json()
    assert 400 <= response.status_code < 500, (response.status_code, body)
    if status is not None:
        assert response.status_code == status, body
    assert isinstance(body["code"], str) and isinstance(body["message"], str), body
    return body


@pytest.fixture
def no_tracebacks(caplog):
    """Fails the test if anything logged an ERROR (the API logs a traceback only for a 500)."""
    caplog.set_level(logging.WARNING)
    yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not errors, [r.getMessage() for r in errors]


@pytest.mark.parametrize(("raw", "status", "code"), [
    (b'{"username": "\\ud800", "password": "x"}', 422, "validation_failed"),
    (b'{"username": "admin", "password": "\\udfff"}', 422, "validation_failed"),
    (b'[' * 100_000 + b']' * 100_000, 400, "json_too_deep"),
    (b'{"a":' * 40 + b'1' + b'}' * 40, 400, "json_too_deep"),
    (b'{"username": "a", "password": NaN}', 400, "invalid_json"),
    (b'{"username": "a", "password": 1e999}', 422, "number_out_of_range"),
    (b'{"username": "a", "password": 99999999999999999999}', 422, "number_out_of_range"),
    (b'{"username": "a", "password": "\xff"}', 400, "invalid_json"),
    (b'{"username": "a\\u0000", "password": "b"}', 422, "validation_failed"),
], ids=["surrogate_username", "surrogate_password", "deep_100k", "deep_40", "nan", "overflow_float",
        "huge_int", "bad_utf8", "nul"])
def test_given_odd_json_when_logging_in_anonymously_then_4xx_error_shape(api, seed, no_tracebacks, raw, status, code):
    tenant = seed.tenant()

    response = api.anonymous(tenant.host).post("/auth/login", data=raw, content_type=JSON)

    assert _assert_4xx_shape(response, status)["code"] == code


def test_given_refused_login_bodies_when_the_address_budget_is_spent_then_even_the_right_password_gets_429(api, seed):
    tenant = seed.tenant()
    anonymous = api.anonymous(tenant.host)
    address = {"REMOTE_ADDR": f"198.18.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"}
    for _ in range(ADDRESS_FAILURE_LIMIT):
        refused = anonymous.post("/auth/login", data=b'{"username": "\\ud800", "password": "x"}',
                                 content_type=JSON, environ_base=address)
        assert refused.status_code == 422

    right = anonymous.post("/auth/login", json={"username": "admin", "password": tenant.admin.password},
                           environ_base=address)

    assert right.status_code == 429, right.get_json()
    assert right.get_json()["code"] == "too_many_login_attempts" and "Retry-After" in right.headers


def test_given_surrogates_and_deep_nesting_when_saving_through_the_api_then_4xx_naming_the_field(api, seed, no_tracebacks):
    _tenant, client = admin_client(api, seed)

    surrogate = client.post("/api/queues", data=b'{"name": "sales\\udc80"}', content_type=JSON)
    deep = client.post("/api/applications", data=b'{"name": "a", "app_json": ' + b'[' * 2000 + b']' * 2000 + b'}',
                       content_type=JSON)

    assert "name" in _assert_4xx_shape(surrogate, 422)["details"]
    assert _assert_4xx_shape(deep, 400)["code"] == "json_too_deep"


@pytest.mark.parametrize("offset", ["+16:00", "-23:59", "+15:59"])
def test_given_timezone_offset_postgresql_refuses_when_filtering_records_then_answered_in_utc(api, seed, no_tracebacks, offset):
    _tenant, client = admin_client(api, seed)
    query = {"from": f"2000-01-01T00:00:00{offset}", "to": f"2001-01-01T00:00:00{offset}"}

    listed = client.get("/api/call-records", query_string=query)
    exported = client.get("/api/call-records/export", query_string=query)

    assert listed.status_code == 200, listed.get_json()
    assert exported.status_code == 200, exported.get_data(as_text=True)[:300]


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_given_instant_with_no_utc_form_when_filtering_then_422(api, seed, no_tracebacks, value):
    _tenant, client = admin_client(api, seed)

    response = client.get("/api/call-records", query_string={"from": value})

    assert _assert_4xx_shape(response, 422)["code"] == "validation_failed"


@pytest.mark.parametrize("cursor", [
    "%ff%fe", "\u00e9\u00e8", "////", _cursor(["\ud800", "x"]), _cursor(["a\u0000", "x"]),
    _cursor([2**70, "x"]), base64.urlsafe_b64encode(b"[" * 5000).decode(),
    _cursor(["2000-01-01T00:00:00+16:00", str(uuid.uuid4())]), _cursor([[[[1]]], {"a": 1}]),
    base64.urlsafe_b64encode(b'["\xff\xfe"]').decode(),
], ids=["percent_bytes", "latin", "slashes", "surrogate", "nul", "huge_int", "deep", "tz16", "nested", "bad_utf8"])
def test_given_cursor_with_odd_bytes_when_listing_then_4xx_or_page(api, seed, no_tracebacks, cursor):
    _tenant, client = admin_client(api, seed)
    for path in ("/api/users", "/api/call-records", "/api/applications"):
        response = client.get(path, query_string={"cursor": cursor})
        assert response.status_code == 200 or _assert_4xx_shape(response)["code"] in (
            "invalid_cursor", "validation_failed")  # validation_failed: longer than 512


@pytest.mark.parametrize("query", [{"limit": "9" * 40}, {"limit": "-1"}, {"limit": "1e9"},
                                   {"offset": "9" * 40}, {"offset": str(2**63)}, {"limit": "9" * 5000}])
def test_given_huge_offset_or_limit_when_listing_then_422(api, seed, no_tracebacks, query):
    tenant, client = admin_client(api, seed)
    queue = seed.queue(tenant)

    response = client.get(f"/api/queues/{queue}/callbacks", query_string=query)

    assert _assert_4xx_shape(response, 422)["code"] == "validation_failed"


@pytest.mark.parametrize("path", ["/api/applications", "/api/nothing-here", "/api/lcr/explain", "/auth/login"])
def test_given_options_request_when_anonymous_or_not_then_never_a_server_error(api, seed, no_tracebacks, path):
    tenant, client = admin_client(api, seed)
    for caller in (api.anonymous(tenant.host), client):
        response = caller.request("OPTIONS", path)
        assert response.status_code in (200, 404), response.get_data(as_text=True)
        if response.status_code == 200:
            assert "OPTIONS" in response.headers["Allow"]


def test_given_an_export_whose_query_postgresql_refuses_then_json_error_and_failed_row(api_app, seed, owner_engine):
    """Filters written around the API (a +16:00 offset the field would have converted): the
    query fails before the first byte, so the answer is the JSON error shape and the log says
    ``failed`` (with the ``started`` row before it)."""
    tenant = seed.tenant()
    beyond = timezone(timedelta(hours=16))
    request = ExportRequest(account_id=tenant.account_id, user_id=tenant.admin.id,
                            filters=CallRecordFilters(started_to=datetime(2000, 1, 1, tzinfo=beyond)))

    with pytest.raises(DataError) as refused:
        stream_export(request)
    with api_app.test_request_context("/api/call-records/export"):
        body, status = handle_data_error(refused.value)

    assert status == 422 and body.get_json()["code"] == "invalid_value"
    with owner_engine.connect() as conn:
        actions = conn.execute(text("SELECT action, row_count FROM compliance_access_log WHERE account_id = :a "
                                    "ORDER BY occurred_at"), {"a": str(tenant.account_id)}).all()
    assert [tuple(a) for a in actions] == [(ACTION_STARTED, None), (ACTION_FAILED, 0)]


def test_given_limits_when_read_then_json_bounds_match_postgresql_bigint():
    assert limits.JSON_MAX_INTEGER == 9223372036854775807 and limits.JSON_MIN_INTEGER == -9223372036854775808


@pytest.mark.parametrize("value", [2**31, 2**40, limits.JSON_MAX_INTEGER])
def test_given_integer_beyond_postgresql_integer_when_patching_the_account_limit_then_422(api, seed, no_tracebacks, value):
    """Found by hand after the fuzzing run: 2**40 reached lower_own_account_limit(integer) as a
    bigint (no such function: a 500)."""
    _tenant, client = admin_client(api, seed)

    response = client.patch("/api/account", json={"max_concurrent_calls": value})

    assert _assert_4xx_shape(response, 422)["code"] == "validation_failed"
