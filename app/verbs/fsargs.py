"""Making customer text safe inside FreeSWITCH application arguments.

FreeSWITCH splits application data with switch_separate_string(): a backslash escapes the next
character and a pair of single quotes groups text (the quotes are removed). It also expands
``${var}`` / ``$${var}`` in the data before the application runs. Text from a webhook must not
be able to change the argument count or read channel variables, hence these helpers.
"""
from __future__ import annotations

import re

_WS = re.compile(r"[\r\n\t\x00-\x1f\x7f]+")


def plain_text(text: str) -> str:
    """Control characters (incl. newlines, which would end the ESL header) → one space, and no
    variable expansion: ``${`` becomes ``$ {`` (spoken the same)."""
    return _WS.sub(" ", text).replace("${", "$ {").strip()


def quote_arg(text: str) -> str:
    """One space-separated argument: single-quoted when it contains a space or a quote."""
    if text and not any(c in text for c in " '\\"):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
