"""Database URL normalisation.

SQLAlchemy 2.1 maps a bare ``postgresql://`` URL to the psycopg (v3) driver, but the project
pins psycopg2 (psycogreen makes it cooperative under gevent). Settings keep libpq-style URLs,
which ``psql`` and operators understand; every engine goes through this function.
"""
from __future__ import annotations

_BARE_SCHEMES = ("postgresql://", "postgres://")


def sqlalchemy_url(url: str) -> str:
    """``postgresql://...`` → ``postgresql+psycopg2://...``; explicit drivers are left alone."""
    for scheme in _BARE_SCHEMES:
        if url.startswith(scheme):
            return "postgresql+psycopg2://" + url[len(scheme):]
    return url
