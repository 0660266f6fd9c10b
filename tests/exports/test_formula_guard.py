import json
from pathlib import Path

import pytest

from app.exports.formula_guard import safe_cell

CASES = json.loads((Path(__file__).parents[1] / "fixtures/api/export_formula_cells.json").read_text())


@pytest.mark.parametrize("raw,expected", CASES["neutralised"])
def test_given_formula_like_text_when_exported_then_cell_gets_leading_apostrophe(raw, expected):
    assert safe_cell(raw) == expected


@pytest.mark.parametrize("raw,expected", CASES["unchanged"])
def test_given_plain_text_or_plain_number_when_exported_then_cell_is_unchanged(raw, expected):
    assert safe_cell(raw) == expected


def test_given_none_when_exported_then_cell_is_empty():
    assert safe_cell(None) == ""


def test_given_negative_integer_value_when_exported_then_it_stays_a_number():
    assert safe_cell(-5) == "-5"
