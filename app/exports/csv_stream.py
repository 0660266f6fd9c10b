"""CSV as a stream of text chunks, so an export never holds all its rows in memory.

Rows are written through :mod:`csv` (quoting of commas, quotes and newlines) after every cell
went through :func:`app.exports.formula_guard.safe_cell`.  Chunks are flushed every
``rows_per_chunk`` rows: small enough to keep memory flat, large enough that the WSGI server
is not asked to send one tiny write per row.
"""
from __future__ import annotations

import csv
import io
from typing import Iterable, Iterator, Sequence

from app.exports.formula_guard import safe_cell

DEFAULT_ROWS_PER_CHUNK = 500


def iter_csv(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    rows_per_chunk: int = DEFAULT_ROWS_PER_CHUNK,
) -> Iterator[str]:
    """Yield the CSV text of ``header`` then ``rows`` in chunks (RFC 4180, CRLF line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(list(header))
    pending = 0
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row])
        pending += 1
        if pending >= rows_per_chunk:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate(0)
            pending = 0
    tail = buffer.getvalue()
    if tail:
        yield tail
