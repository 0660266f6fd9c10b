"""Contacts to import, checked all together before any is written (JSON list or CSV rows).

Each item becomes the column values of one ``campaign_contacts`` row, or a ``RowError`` naming
its row (the CSV line, or the JSON list index) and field. One error refuses the whole import:
a half-imported list is worse than none, since re-sending it would duplicate the first half.
A number may appear once per campaign (two rows of one number could be dialled at once).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from app.campaigns import numbers
from app.errors import ValidationFailed

NAME_MAX = 255
# bad rows named in one refusal: enough to fix a file in a few rounds, not a wall of text
MAX_ERRORS = 20
ATTRIBUTE_KEY_MAX = 64
# CSV columns with a meaning of their own; every other column is an attribute
CSV_COLUMNS = ("phone_number", "name", "time_zone")


@dataclass(frozen=True)
class RowError:
    row: int
    field: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "field": self.field, "message": self.message}


def rejected(errors: list[RowError], source: str) -> ValidationFailed:
    """The error that refuses a whole import: the first bad row in the message, up to 20 in
    ``details[source]``; ``source`` is the JSON list's name (rows are indexes) or "rows" (CSV
    line numbers)."""
    first = errors[0]
    where = f"row {first.row}" if source == "rows" else f"item {first.row}"
    return ValidationFailed(f"Nothing imported: {where}, {first.field}: {first.message}",
                            details={source: [e.to_dict() for e in errors[:MAX_ERRORS]]})


class ContactsRejected(Exception):
    def __init__(self, errors: list[RowError]) -> None:
        super().__init__(f"{len(errors)} bad row(s); first: row {errors[0].row} {errors[0].field}: {errors[0].message}")
        self.errors = errors


def from_csv_row(values: dict[str, str]) -> dict[str, Any]:
    """A CSV row as the JSON item shape: the known columns, the rest (non-empty) as attributes."""
    return {
        "phone_number": values.get("phone_number", ""),
        "name": values.get("name") or None,
        "time_zone": values.get("time_zone") or None,
        "attributes": {k: v for k, v in values.items() if k not in CSV_COLUMNS and v},
    }


def prepare(items: Iterable[tuple[int, dict[str, Any]]], existing_numbers: set[str]) -> list[dict[str, Any]]:
    """Row values for every item; ContactsRejected with the bad rows otherwise."""
    errors: list[RowError] = []
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for row, item in items:
        try:
            number = numbers.parse(str(item.get("phone_number") or ""))
        except numbers.InvalidContactNumber as exc:
            errors.append(RowError(row, "phone_number", str(exc)))
            continue
        if number.digits in existing_numbers:
            errors.append(RowError(row, "phone_number", "This number is already a contact of the campaign."))
        elif number.digits in seen:
            errors.append(RowError(row, "phone_number", f"The same number as row {seen[number.digits]}."))
        seen.setdefault(number.digits, row)
        try:
            zones = numbers.contact_zones(number, item.get("time_zone"))
        except ValueError as exc:
            errors.append(RowError(row, "time_zone", str(exc)))
            continue
        name = item.get("name")
        if name is not None and len(name) > NAME_MAX:
            errors.append(RowError(row, "name", f"Longer than {NAME_MAX} characters."))
        attributes = item.get("attributes") or {}
        if any(len(k) > ATTRIBUTE_KEY_MAX for k in attributes):
            errors.append(RowError(row, "attributes", f"An attribute name is longer than {ATTRIBUTE_KEY_MAX}."))
        rows.append({"phone_number": number.digits, "name": name, "attributes": attributes,
                     "time_zone": item.get("time_zone") or None, "time_zones": list(zones)})
    if errors:
        raise ContactsRejected(errors)
    return rows
