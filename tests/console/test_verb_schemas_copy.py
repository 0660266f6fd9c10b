"""The flow editor's per-verb forms are generated from web/src/flows/verb-schemas.json, a copy of
the server's verb JSON Schema (app/verbs/jsonschema.py) for the verbs that get a form: it must
be exactly what the server generates, so a form never offers a field the server refuses."""
from __future__ import annotations

import json
from pathlib import Path

from app.verbs.jsonschema import verb_list_json_schema

COPY = Path(__file__).resolve().parents[2] / "web" / "src" / "flows" / "verb-schemas.json"
FORM_VERBS = ("say", "play", "gather", "dial", "record", "hangup", "redirect")


def test_the_consoles_verb_schemas_are_the_servers() -> None:
    served = verb_list_json_schema()["$defs"]
    copy = json.loads(COPY.read_text())
    assert sorted(copy) == sorted(FORM_VERBS)
    for verb in FORM_VERBS:
        assert copy[verb] == served[verb], (
            f"web/src/flows/verb-schemas.json's {verb} differs from the server's: regenerate it "
            "(docs/console.md \"Per-verb forms\")")
