"""Errors of the verb language.

A verb list is accepted or rejected as a whole (SPEC "Verbs": no partial execution), so the
rejection carries every problem found, each pinned to the item and field that caused it.
"""
from __future__ import annotations

from typing import Any, Optional, TypedDict

from app.errors import ValidationFailed


class VerbError(TypedDict):
    index: Optional[int]   # position in the list; None when the list itself is wrong
    verb: Optional[str]    # the verb name when it could be read
    field: Optional[str]   # dotted path inside the item (``target.0.name``); None for the item
    message: str


class VerbListRejected(ValidationFailed):
    """The whole instruction list is refused; nothing from it may run."""

    code = "verb_list_rejected"

    def __init__(self, errors: list[VerbError], message: str = "instructions rejected") -> None:
        super().__init__(message, details=list(errors))
        self.errors: list[VerbError] = list(errors)

    def __str__(self) -> str:
        return f"{self.message}: " + "; ".join(format_error(e) for e in self.errors)


def format_error(error: VerbError | dict[str, Any]) -> str:
    """One line per error, the shape the CLI prints: ``#2 dial target.0.name: ...``."""
    parts = []
    if error.get("index") is not None:
        parts.append(f"#{error['index']}")
    if error.get("verb"):
        parts.append(str(error["verb"]))
    if error.get("field"):
        parts.append(str(error["field"]))
    head = " ".join(parts)
    return f"{head}: {error['message']}" if head else str(error["message"])
