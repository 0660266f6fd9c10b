"""Cooperative I/O for every process: call ``patch()`` before anything else is imported.

Under gevent everything that does I/O must yield; psycopg2 needs psycogreen's wait callback
or one slow query would freeze every call on the controller.
"""
from __future__ import annotations

_patched = False


def patch() -> None:
    global _patched
    if _patched:
        return
    from gevent import monkey

    monkey.patch_all()
    from psycogreen.gevent import patch_psycopg

    patch_psycopg()
    _patched = True
