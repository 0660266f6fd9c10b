"""Loading the verb fixture files (tests/fixtures/verbs/good|bad/*.json)."""
from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "verbs"


def good_fixtures() -> list[Path]:
    return sorted((FIXTURES / "good").glob("*.json"))


def bad_fixtures() -> list[Path]:
    return sorted((FIXTURES / "bad").glob("*.json"))


def load(path: Path):
    return json.loads(path.read_text())
