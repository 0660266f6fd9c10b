"""A value longer than its column used to reach PostgreSQL: 500, and the logged exception carried
the INSERT's parameters — the new user's bcrypt hash. Over-long values are 422 now, and a failed
statement never puts row values in the log."""
from __future__ import annotations

import logging
import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.db.engine import app_engine
from tests.api_management.helpers import admin_client

LONG_EMAIL = "a" * 350 + "@example.com"


def test_given_email_longer_than_column_when_creating_user_then_422_and_no_hash_logged(api, seed, caplog):
    _tenant, client = admin_client(api, seed)
    caplog.set_level(logging.DEBUG)

    response = client.post("/api/users", json={"username": "eve", "password": "Secretpass123",
                                                "email": LONG_EMAIL})

    assert response.status_code == 422, response.get_json()
    assert "email" in response.get_json()["details"]["json"]
    assert "$2b$" not in caplog.text


def test_given_language_longer_than_column_when_creating_application_then_422(api, seed):
    _tenant, client = admin_client(api, seed)

    response = client.post("/api/applications", json={"name": "a", "language": "en-" + "-".join(["abcdefgh"] * 4)})

    assert response.status_code == 422, response.get_json()
    assert "language" in response.get_json()["details"]["json"]


def test_given_failing_statement_when_error_rendered_then_parameters_are_not_in_the_message():
    secret = "$2b$12$" + uuid.uuid4().hex

    with pytest.raises(DBAPIError) as failure, app_engine().connect() as conn:
        conn.execute(text("SELECT CAST(:v AS text), 1 / 0"), {"v": secret})  # PG does not echo :v

    assert secret not in str(failure.value)
