"""Spreadsheet formula-injection guard for exported cells.

A spreadsheet opening a CSV evaluates any cell that starts with ``=``, ``+``, ``-`` or ``@``
(and, in some programs, a cell starting with TAB or CR) as a formula, so a caller name such as
``=HYPERLINK(...)`` or ``-2+3+cmd|' /C calc'!A0`` would run on the analyst's machine.  Such a
cell gets a leading apostrophe, which every spreadsheet reads as "this is text".

Decision on numbers: a cell that is *entirely* a plain decimal number (``-5``, ``+15551234567``,
``3.25``) is left as it is.  A spreadsheet parses it as a number, never as a formula, because a
formula needs an operator or a function after the sign; prefixing it would instead corrupt real
data (negative amounts, E.164 numbers).  Anything else that merely *starts* like a number
(``-5+cmd|...``, ``+1 555``) is not a plain number and is prefixed.
"""
from __future__ import annotations

import re

# Characters that make a spreadsheet treat the cell as a formula (OWASP CSV injection list).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")

# Whole-cell plain number: optional sign, digits, optional fraction. No spaces, no exponent,
# no operators — nothing a spreadsheet could evaluate as a formula.
_PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?\Z")


def safe_cell(value: object) -> str:
    """The text to write for ``value``: ``None`` is empty, formula-like text gets ``'``."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if text.startswith(FORMULA_TRIGGERS) and not _PLAIN_NUMBER.match(text):
        return "'" + text
    return text
