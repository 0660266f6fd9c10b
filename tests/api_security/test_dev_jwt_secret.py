"""The built-in JWT secret is in the source: an API answering on a real domain with it would let
anyone sign an admin token for any tenant. The app refuses to start that way."""
from __future__ import annotations

import dataclasses

import pytest

from app.api import app as api_app
from app.settings import DEV_BASE_DOMAIN, DEV_JWT_SECRET, get_settings


def _settings(**changes):
    return dataclasses.replace(get_settings(), **changes)


def test_given_builtin_jwt_secret_on_a_real_domain_when_app_created_then_refused(monkeypatch):
    monkeypatch.setattr(api_app, "get_settings", lambda: _settings(jwt_secret=DEV_JWT_SECRET,
                                                                    base_domain="sbc.example.com"))

    with pytest.raises(RuntimeError, match="SBC_JWT_SECRET"):
        api_app.create_app({"TESTING": True})


def test_given_builtin_jwt_secret_on_localhost_when_app_created_then_starts(monkeypatch):
    monkeypatch.setattr(api_app, "get_settings", lambda: _settings(jwt_secret=DEV_JWT_SECRET,
                                                                    base_domain=DEV_BASE_DOMAIN))

    assert api_app.create_app({"TESTING": True}) is not None


def test_given_own_jwt_secret_on_a_real_domain_when_app_created_then_starts(monkeypatch):
    monkeypatch.setattr(api_app, "get_settings", lambda: _settings(jwt_secret="s3cret-" + "x" * 32,
                                                                    base_domain="sbc.example.com"))

    assert api_app.create_app({"TESTING": True}) is not None
