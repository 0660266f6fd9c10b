"""Fuzzing the parser: nothing crashes, one bad item rejects the whole list, and the exported
JSON Schema agrees with the validator on mutated items."""
from __future__ import annotations

import copy

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.verbs import REGISTRY, VerbListRejected, parse_verb_list
from app.verbs.jsonschema import verb_list_json_schema
from tests.verbs.fixtures import good_fixtures, load

VALID_ITEMS = [item for path in good_fixtures() for item in load(path)]
FIELD_NAMES = sorted({key for item in VALID_ITEMS for key in item} | {"text", "url", "loop", "bogus"})
VALIDATOR = jsonschema.Draft202012Validator(verb_list_json_schema())

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False, width=32),
                         st.text(max_size=20), st.sampled_from(list(REGISTRY)))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(min_size=0, max_size=8), inner, max_size=4)),
    max_leaves=12)


@st.composite
def mutated_items(draw):
    item = copy.deepcopy(draw(st.sampled_from(VALID_ITEMS)))
    key = draw(st.sampled_from(FIELD_NAMES))
    if draw(st.booleans()) and key in item:
        del item[key]
    else:
        item[key] = draw(json_values)
    return item


def accepted(data) -> bool:
    try:
        parse_verb_list(data)
        return True
    except VerbListRejected:
        return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, st.lists(st.one_of(json_values, mutated_items(), st.sampled_from(VALID_ITEMS)), max_size=8)))
def test_given_arbitrary_json_when_parsed_then_only_verb_list_rejected_is_raised(data):
    try:
        parse_verb_list(data)
    except VerbListRejected as exc:
        assert exc.errors and all(e["message"] for e in exc.errors)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(mutated_items(), st.sampled_from(VALID_ITEMS)), min_size=1, max_size=8))
def test_given_list_when_any_item_is_invalid_alone_then_whole_list_rejected(items):
    item_ok = [accepted([item]) for item in items]
    assert accepted(items) == all(item_ok)
    if not all(item_ok):
        bad_indexes = {i for i, ok in enumerate(item_ok) if not ok}
        try:
            parse_verb_list(items)
        except VerbListRejected as exc:
            assert {e["index"] for e in exc.errors} == bad_indexes


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_items())
def test_given_mutated_item_when_checked_then_json_schema_and_validator_agree(item):
    assert accepted([item]) == VALIDATOR.is_valid([item])


node_ids = st.sampled_from(["a", "b", "c", "menu", "bad id", ""])


@st.composite
def flows(draw):
    nodes = {}
    for node_id in draw(st.lists(node_ids, min_size=0, max_size=5, unique=True)):
        node = {"verb": draw(st.one_of(st.sampled_from(VALID_ITEMS), mutated_items(), json_values))}
        for key in draw(st.lists(st.sampled_from(["next", "branches", "default", "goto"]), max_size=3, unique=True)):
            node[key] = draw(st.one_of(node_ids, st.dictionaries(st.sampled_from(["1", "2", "#"]), node_ids, max_size=2), json_scalars))
        nodes[node_id] = node
    flow = {"start": draw(st.one_of(node_ids, json_scalars)), "nodes": nodes}
    return draw(st.one_of(st.just(flow), json_values))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flows())
def test_given_arbitrary_flow_json_when_validated_then_only_validation_failed_is_raised(definition):
    from app.errors import ValidationFailed
    from app.flows import validate_flow

    try:
        flow = validate_flow(definition)
    except ValidationFailed as exc:
        assert exc.details and all(e["message"] for e in exc.details)
    else:
        assert flow.start in flow.nodes
