"""Cursor encoding used by every list endpoint: round trip, typed decode, forged cursors refused."""
from __future__ import annotations

import base64
import datetime as dt
import json
import uuid

import pytest

from app.api.pagination import InvalidCursor, clamp_limit, decode_cursor, encode_cursor
from app.models import Application, CallRecord


def _raw(values) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def test_given_typed_key_values_when_encoded_and_decoded_then_types_come_back():
    when = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)
    ident = uuid.uuid4()
    cursor = encode_cursor([when, ident])
    assert decode_cursor(cursor, [Application.created_at, Application.id]) == [when, ident]


@pytest.mark.parametrize("cursor", [
    "%%%not-base64%%%",
    _raw({"a": 1}),                                   # not a list
    _raw(["2026-03-01T12:00:00+00:00"]),              # too few keys
    _raw(["yesterday", str(uuid.uuid4())]),           # not a datetime
    _raw(["2026-03-01T12:00:00+00:00", "42"]),        # not a uuid
    _raw(["2026-03-01T12:00:00+00:00", None]),        # null key
    _raw([["nested"], str(uuid.uuid4())]),            # wrong JSON type
])
def test_given_a_forged_cursor_when_decoded_then_invalid_cursor(cursor):
    with pytest.raises(InvalidCursor) as caught:
        decode_cursor(cursor, [CallRecord.started_at, CallRecord.public_id])
    assert caught.value.status == 400 and caught.value.code == "invalid_cursor"


def test_given_out_of_range_limits_when_clamped_then_between_1_and_200():
    assert (clamp_limit(None), clamp_limit(0), clamp_limit(10), clamp_limit(10_000)) == (50, 1, 10, 200)


def test_given_the_app_when_reading_openapi_then_every_management_path_is_documented(api):
    paths = api.anonymous("any.localhost").get("/api/openapi.json").get_json()["paths"]
    for path in ("/api/applications", "/api/phone-numbers/{number_id}/answering", "/api/call-flows",
                 "/api/carriers/{carrier_id}/gateways", "/api/gateways/{gateway_id}", "/api/lcr/{lcr_id}/routes",
                 "/api/lcr/routes/{route_id}/carriers", "/api/queues", "/api/users", "/api/agents",
                 "/api/campaigns/{campaign_id}/contacts", "/api/call-records", "/api/call-records/export",
                 "/api/call-records/{public_id}"):
        assert path in paths, path
