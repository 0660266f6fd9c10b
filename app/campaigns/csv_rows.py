"""CSV uploads (contacts, do-not-call): the whole file read and checked before anything is
written, so a bad row refuses the file with the line that carried it and nothing is imported.

Format: UTF-8 (a BOM is tolerated), comma-separated, a header line naming the columns. The row
number in errors is the file's line number as a spreadsheet shows it (the header is row 1).
"""
from __future__ import annotations

import csv
import io


class CsvRejected(Exception):
    """The file as a whole cannot be read (encoding, header, size); ``field`` names the culprit."""

    def __init__(self, message: str, *, row: int | None = None) -> None:
        super().__init__(message)
        self.message, self.row = message, row


def read(body: bytes, *, required: str, max_rows: int) -> list[tuple[int, dict[str, str]]]:
    """(row number, {column: value}) for every data row; blank lines are skipped. Header names
    are lower-cased and stripped; ``required`` must be one of them."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CsvRejected(f"The file is not UTF-8 text (byte {exc.start}).") from exc
    if "\x00" in text:
        raise CsvRejected("The file contains a NUL character: not a CSV text file.")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise CsvRejected("The file is empty: send a header line and at least one row.")
        columns = [h.strip().lower() for h in header]
        if required not in columns:
            raise CsvRejected(f"Row 1, the header line, must name a '{required}' column (got: {', '.join(columns)[:200]}).",
                              row=1)
        if len(set(columns)) != len(columns) or "" in columns:
            raise CsvRejected("Row 1, the header line, has an empty or repeated column name.", row=1)
        rows: list[tuple[int, dict[str, str]]] = []
        for values in reader:
            line = reader.line_num
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(columns):
                raise CsvRejected(f"Row {line} has {len(values)} fields; the header has {len(columns)}.", row=line)
            rows.append((line, {c: v.strip() for c, v in zip(columns, values)}))
            if len(rows) > max_rows:
                raise CsvRejected(f"More than {max_rows} rows: split the file.", row=line)
    except csv.Error as exc:
        raise CsvRejected(f"Row {reader.line_num} is not valid CSV: {exc}.", row=reader.line_num) from exc
    if not rows:
        raise CsvRejected("The file has a header but no rows.")
    return rows
