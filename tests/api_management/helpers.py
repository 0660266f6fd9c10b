"""Shared helpers for the management API tests: fixture files and seeded tenants with a client."""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "api"

# Public (global unicast) address: passes the SSRF guard without DNS (tests have no network).
PUBLIC_HOOK = "https://8.8.8.8/hook"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def cases(name: str) -> list[Any]:
    """One pytest.param per entry of a JSON list, id = the entry's ``name``."""
    return [pytest.param(entry, id=entry["name"]) for entry in load(name)]


def admin_client(api, seed, licenses=None):
    """(tenant, ApiClient logged in as its admin)."""
    tenant = seed.tenant() if licenses is None else seed.tenant(licenses=licenses)
    return tenant, api.login(tenant)


def insert(owner_engine, *rows: Any) -> None:
    """Seed rows as the owner (the test's operator), bypassing the API under test."""
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        for row in rows:
            db.add(row)
            db.flush()


def new_id() -> str:
    return str(uuid.uuid4())


def assert_error(response, status: int, code: str) -> dict:
    body = response.get_json()
    assert response.status_code == status, body
    assert body["code"] == code, body
    assert isinstance(body["message"], str) and body["message"]
    return body
