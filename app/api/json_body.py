"""The one strict JSON decoder for everything the API accepts as JSON: request bodies (every
route, before webargs sees them) and pagination cursors.

Python's ``json`` accepts documents that are valid JSON (or near it) yet cannot be stored or
processed: lone UTF-16 surrogates (``"\\ud800"``: no UTF-8 encoding exists, so psycopg2, Redis
and hashlib raise), NUL (PostgreSQL text/jsonb refuse it), nesting deep enough to exhaust the
interpreter's recursion limit, integers PostgreSQL's bigint cannot hold, and the non-JSON
constants ``NaN``/``Infinity`` (jsonb refuses them) or numbers that overflow to infinity. Each
such input used to surface as a 500 from whichever layer tripped first. Here they are refused
once, up front, as typed errors the API maps to its JSON error shape:

* not JSON at all (syntax, bad UTF-8, NaN/Infinity, too deep to parse) -> 400 ``invalid_json``;
* nested deeper than ``JSON_MAX_DEPTH`` -> 400 ``json_too_deep``;
* text with NUL or a lone surrogate -> 422 ``validation_failed`` naming the field;
* a number outside bigint, or a float that is not finite -> 422 ``number_out_of_range``.

The document is walked iteratively (an explicit stack), so no check here can itself recurse.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from app import limits
from app.errors import BadRequest, ValidationFailed

NUL = "\x00"
_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidJson(BadRequest):
    code = "invalid_json"


class JsonTooDeep(BadRequest):
    code = "json_too_deep"


class NumberOutOfRange(ValidationFailed):
    code = "number_out_of_range"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 overflows to inf: jsonb and float8 refuse it
        raise _OutOfRange(text)
    return value


def _parse_int(text: str) -> int:
    value = int(text)  # Python refuses > 4300 digits itself (ValueError -> invalid_json)
    if not limits.JSON_MIN_INTEGER <= value <= limits.JSON_MAX_INTEGER:
        raise _OutOfRange(text)
    return value


class _OutOfRange(Exception):
    """Raised from inside the parser hooks; not a ValueError, so json does not swallow it."""


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text, or None."""
    if NUL in value:
        return "Contains a NUL character."
    if _SURROGATE.search(value):
        return "Contains a lone UTF-16 surrogate (not encodable as UTF-8)."
    return None


def loads(raw: bytes | str, *, where: str = "body") -> Any:
    """Decode ``raw`` strictly (see the module docstring) or raise the typed error."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise InvalidJson("The request body is not valid UTF-8 JSON.") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_parse_float,
                           parse_int=_parse_int)
    except _OutOfRange:
        raise NumberOutOfRange(
            f"Numbers must be finite and integers within {limits.JSON_MIN_INTEGER}.."
            f"{limits.JSON_MAX_INTEGER}.", details={where: ["Number out of range."]}) from None
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        raise InvalidJson("The request body is not valid JSON.") from None
    check(value, where=where)
    return value


def _too_deep() -> JsonTooDeep:
    return JsonTooDeep(f"JSON may nest objects and arrays at most {limits.JSON_MAX_DEPTH} deep.")


def check(value: Any, *, where: str = "body") -> None:
    """Walk an already decoded document: depth, text and number checks (iterative)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item, path or where)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not limits.JSON_MIN_INTEGER <= item <= limits.JSON_MAX_INTEGER:
                raise NumberOutOfRange("Integer out of range.", details={path or where: ["Number out of range."]})
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise NumberOutOfRange("Numbers must be finite.", details={path or where: ["Number out of range."]})
        elif isinstance(item, (dict, list)):
            if depth >= limits.JSON_MAX_DEPTH:
                raise _too_deep()
            if isinstance(item, dict):
                for key, child in item.items():
                    child_path = f"{path}.{key}" if path else str(key)
                    _check_text(str(key), printable(child_path))
                    stack.append((child, child_path, depth + 1))
            else:
                for index, child in enumerate(item):
                    stack.append((child, f"{path}[{index}]" if path else f"[{index}]", depth + 1))


def _check_text(value: str, path: str) -> None:
    problem = text_problem(value)
    if problem is not None:
        noun = "NUL characters" if NUL in value else "lone UTF-16 surrogates"
        raise ValidationFailed(f"Text must not contain {noun}.", details={printable(path): [problem]})


def printable(path: str) -> str:
    """A field path safe to echo back (the offending characters escaped)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", path).replace(NUL, "\\u0000")
