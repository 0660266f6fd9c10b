"""Stored flow validation: graph rules plus the same verb schemas as webhook replies."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.errors import ValidationFailed
from app.flows import validate_flow
from app.verbs.gather import Gather

FLOWS = Path(__file__).resolve().parent.parent / "fixtures" / "verbs" / "flows"


def _load(path: Path):
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", sorted((FLOWS / "good").glob("*.json")), ids=lambda p: p.stem)
def test_given_good_flow_when_validated_then_every_node_is_parsed(path):
    definition = _load(path)
    flow = validate_flow(definition)
    assert flow.start == definition["start"]
    assert set(flow.nodes) == set(definition["nodes"])


@pytest.mark.parametrize("path", sorted((FLOWS / "bad").glob("*.json")), ids=lambda p: p.stem)
def test_given_bad_flow_when_validated_then_rejected_with_the_expected_errors(path):
    case = _load(path)
    with pytest.raises(ValidationFailed) as caught:
        validate_flow(case["flow"])
    assert caught.value.code == "flow_invalid"
    got = sorted((e["node"] or "", e["field"] or "") for e in caught.value.details)
    want = sorted((e["node"] or "", e["field"] or "") for e in case["errors"])
    assert got == want


def test_given_menu_gather_when_routing_then_digits_then_speech_then_default():
    flow = validate_flow(_load(FLOWS / "good" / "ivr_menu_loop_through_gather.json"))
    menu = flow.nodes["menu"]
    assert isinstance(menu.verb, Gather)
    assert menu.route("1", "") == "sales"
    assert menu.route("", " Sales ") == "sales"
    assert menu.route("9", "") == "sorry"
    assert menu.route("", "") == "sorry"


def test_given_cycle_through_gather_when_validated_then_accepted():
    flow = validate_flow({"start": "g", "nodes": {
        "g": {"verb": {"verb": "gather"}, "branches": {"1": "s"}, "default": "g"},
        "s": {"verb": {"verb": "say", "text": "again"}, "next": "g"}}})
    assert set(flow.nodes) == {"g", "s"}
