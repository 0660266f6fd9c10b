"""REST API: ``create_app()`` builds the Flask app (see app.api.app)."""
from __future__ import annotations

from app.api import strict_args

# Before any route module defines its blueprint: every @blp.arguments then parses JSON bodies
# strictly (a body required, JSON booleans and integers as the OpenAPI document says).
strict_args.install()


def create_app(config=None):  # noqa: ANN001 - thin re-export, typed in app.api.app
    from app.api.app import create_app as _create_app

    return _create_app(config)
