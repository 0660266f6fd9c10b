"""``POST /api/applications/validate``: an ``app_json`` checked without saving it, by the same
parser the save (and the controller) runs, so the console can show every problem with its JSON
Pointer while the developer types, not only when they save."""
from __future__ import annotations

from typing import Any, Optional

from app.api.applications.service import verb_url_problems
from app.verbs import VerbListRejected, parse_verb_list
from app.verbs.errors import VerbError


def error_pointer(error: VerbError | dict[str, Any]) -> str:
    """The JSON Pointer (RFC 6901) of a verb error inside the list: ``/1/target/0/name``."""
    parts: list[str] = []
    if error.get("index") is not None:
        parts.append(str(error["index"]))
    field: Optional[str] = error.get("field")
    if field:
        parts.extend(field.split("."))
    return "".join(f"/{p.replace('~', '~0').replace('/', '~1')}" for p in parts)


def _located(error: VerbError | dict[str, Any]) -> dict[str, Any]:
    return {"index": error.get("index"), "verb": error.get("verb"), "field": error.get("field"),
            "path": error_pointer(error), "message": error["message"]}


def check_verb_list(value: Any) -> dict[str, Any]:
    """``{"valid", "verbs", "errors", "warnings"}``: errors and warnings each with ``path``.
    URLs are checked only once the list parses (the save refuses the first unsafe one)."""
    try:
        verbs = parse_verb_list(value)
    except VerbListRejected as exc:
        return {"valid": False, "verbs": [], "errors": [_located(e) for e in exc.errors], "warnings": []}
    errors = []
    for path, message in verb_url_problems(value):
        index, *field = path.split("/")[1:]
        errors.append({"index": int(index), "verb": value[int(index)].get("verb"),
                       "field": ".".join(field), "path": path, "message": message})
    return {"valid": not errors, "verbs": [v.name for v in verbs], "errors": errors,
            "warnings": [_located(w) for w in verbs.warnings]}
