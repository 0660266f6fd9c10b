"""The exported JSON Schema agrees with the validator on every fixture."""
from __future__ import annotations

import json

import jsonschema
import pytest

from app.verbs.jsonschema import verb_list_json_schema
from tests.verbs.fixtures import bad_fixtures, good_fixtures, load


@pytest.fixture(scope="module")
def validator():
    schema = verb_list_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_given_export_when_dumped_then_it_is_draft_2020_12_json():
    schema = json.loads(json.dumps(verb_list_json_schema()))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["minItems"] == 1
    assert len(schema["$defs"]) == 12


@pytest.mark.parametrize("path", good_fixtures(), ids=lambda p: p.stem)
def test_given_good_fixture_when_checked_against_json_schema_then_valid(validator, path):
    assert list(validator.iter_errors(load(path))) == []


@pytest.mark.parametrize("path", bad_fixtures(), ids=lambda p: p.stem)
def test_given_bad_fixture_when_checked_against_json_schema_then_invalid(validator, path):
    assert list(validator.iter_errors(load(path)["reply"])) != []


def test_given_marshmallow_defaults_when_exported_then_schema_defaults_match():
    defs = verb_list_json_schema()["$defs"]
    assert defs["gather"]["properties"]["timeout"]["default"] == 5
    assert defs["gather"]["properties"]["finishOnKey"]["default"] == "#"
    assert defs["dial"]["properties"]["timeout"]["default"] == 60
    assert defs["queue"]["properties"]["announceInterval"]["default"] == 30
    assert defs["listen"]["properties"]["sampleRate"]["enum"] == [8000, 16000]
    assert sorted(defs["say"]["required"]) == ["text", "verb"]
