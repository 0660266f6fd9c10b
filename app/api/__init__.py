"""REST API: ``create_app()`` builds the Flask app (see app.api.app)."""
from __future__ import annotations


def create_app(config=None):  # noqa: ANN001 - thin re-export, typed in app.api.app
    from app.api.app import create_app as _create_app

    return _create_app(config)
