"""The call record's ``talk_ms`` and the interaction summary's ``talk_ms`` measure different
things under one name: the OpenAPI document says which is which (docs/api.md says the same)."""
from __future__ import annotations


def test_given_the_openapi_document_then_each_talk_ms_says_what_it_measures(api):
    schemas = api.anonymous("acme.localhost").get("/api/openapi.json").get_json()["components"]["schemas"]
    record = schemas["CallRecord"]["properties"]["talk_ms"]["description"]
    summary = schemas["InteractionSummary"]["properties"]["talk_ms"]["description"]
    segment = schemas["InteractionSegment"]["properties"]["talk_ms"]["description"]
    assert "answer until hang-up" in record and "queue wait" in record
    assert "bridge" in summary and "minus hold" in summary and "Not the record's talk_ms" in summary
    assert "minus hold" in segment
