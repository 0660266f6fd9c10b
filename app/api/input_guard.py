"""PostgreSQL ``text`` and ``jsonb`` cannot hold the NUL character: psycopg2 raises on ``\\x00``
in a parameter and jsonb refuses ``\\u0000``, so such input reached the database as a 500.
It is refused up front, for every /api/ request, as a 422 naming the field."""
from __future__ import annotations

from typing import Any

from flask import request

from app.errors import ValidationFailed

NUL = "\x00"


def _nul_path(value: Any, path: str) -> str | None:
    """Dotted path of the first string (or object key) containing NUL, or None."""
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if NUL in str(key):
                return where
            found = _nul_path(item, where)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _nul_path(item, f"{path}[{index}]" if path else f"[{index}]")
            if found is not None:
                return found
    return None


def refuse_nul_characters() -> None:
    """422 ``validation_failed`` when a query parameter or the JSON body holds a NUL character."""
    for name, value in request.args.items(multi=True):
        if NUL in name or NUL in value:
            raise ValidationFailed("Text must not contain NUL characters.",
                                   details={name.replace(NUL, ""): ["Contains a NUL character."]})
    body = request.get_json(silent=True) if request.is_json else None
    where = _nul_path(body, "")
    if where is not None:
        where = where.replace(NUL, "\\u0000") or "body"
        raise ValidationFailed("Text must not contain NUL characters.",
                               details={where: ["Contains a NUL character."]})
