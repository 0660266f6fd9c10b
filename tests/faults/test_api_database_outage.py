"""PostgreSQL unreachable while the API serves: a login or any request that needs the database
is a 503 ``database_unavailable`` with ``Retry-After`` (it was a 500 ``internal_error`` with a
traceback), and everything works again once the database is back. The API's database URLs point
at a local port where nothing listens (connection refused); the real PostgreSQL is never stopped."""
from __future__ import annotations

import dataclasses
import logging
import socket

import pytest
from sqlalchemy import make_url

from app import limits
from app.db import engine as db_engine
from app.settings import get_settings


def _port_where_nothing_listens() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed on exit: a connect there is refused


@pytest.fixture
def database_away(monkeypatch):
    """Calls ``cut()`` to send every product session to the dead port, ``heal()`` to restore."""
    settings = get_settings()
    port = _port_where_nothing_listens()

    def dead(url: str) -> str:
        return make_url(url).set(host="127.0.0.1", port=port).render_as_string(hide_password=False)

    away = dataclasses.replace(settings, app_database_url=dead(settings.app_database_url),
                               platform_database_url=dead(settings.platform_database_url))

    class Switch:
        def cut(self) -> None:
            db_engine.reset_engines()
            monkeypatch.setattr(db_engine, "get_settings", lambda: away)

        def heal(self) -> None:
            monkeypatch.undo()
            db_engine.reset_engines()

    switch = Switch()
    yield switch
    switch.heal()


def test_given_postgresql_unreachable_when_logging_in_or_reading_then_503_database_unavailable_and_back_after(
        api, seed, database_away, caplog):
    tenant = seed.tenant()
    admin = api.login(tenant)  # a token issued while the database was there
    body = {"username": "admin", "password": tenant.admin.password}
    caplog.set_level(logging.WARNING)

    database_away.cut()
    login = api.anonymous(tenant.host).post("/auth/login", json=body)
    listing = admin.get("/api/users")
    database_away.heal()
    again = api.anonymous(tenant.host).post("/auth/login", json=body)

    for response in (login, listing):
        assert response.status_code == 503, response.get_json()
        assert response.get_json()["code"] == "database_unavailable"
        assert response.headers["Retry-After"] == str(limits.DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS)
    assert again.status_code == 200, again.get_json()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "no traceback for an outage"
