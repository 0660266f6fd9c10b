"""Load the good/bad request bodies kept as JSON files under tests/fixtures/api/."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "api"


def cases(name: str) -> list[Any]:
    """pytest.param per entry, id = the entry's ``name``."""
    entries = json.loads((FIXTURES / name).read_text())
    return [pytest.param(entry, id=entry["name"]) for entry in entries]
