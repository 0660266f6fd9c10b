"""E.164 numbers of campaign contacts and the time zones their calling window is checked in.

Validation is *possible* numbers (Google's libphonenumber metadata, the ``phonenumbers``
package): a country calling code that exists and a length that country uses. We do not ask for
*valid* (an assigned range): test and fictional ranges (``+1 555 01xx``) must import, and the
carrier is the judge of whether a range is in service.

Time zone when the contact has none: libphonenumber's prefix → zones table (for NANP that is
the area code, so ``+1 212`` is New York). A prefix that maps to several zones (a toll-free
``+1 800``, a mobile ``+7 9xx``) keeps them all, and the calling window must hold in every one
of them (app/campaigns/window.py): we never call someone in the zone where it is too early.
A number the table does not know falls back to every zone of its country calling code; a code
without any zone (``+882`` international networks) needs an explicit ``time_zone``.
"""
from __future__ import annotations

import zoneinfo
from dataclasses import dataclass

import phonenumbers
from phonenumbers import timezone as phone_zones


class InvalidContactNumber(ValueError):
    """Not an E.164 number: the message says why, for the row that carried it."""


@dataclass(frozen=True)
class ContactNumber:
    digits: str  # E.164 without the "+", as stored and dialled
    time_zones: tuple[str, ...]  # empty when no zone can be derived


def parse(raw: str) -> ContactNumber:
    """``raw`` as an E.164 number (``+`` optional): its digits and derived time zones."""
    text = raw.strip()
    digits = text[1:] if text.startswith("+") else text
    if not digits.isascii() or not digits.isdigit() or not 8 <= len(digits) <= 15 or digits[0] == "0":
        raise InvalidContactNumber("Not an E.164 number: 8 to 15 digits with the country code, "
                                   "optionally after a '+'.")
    try:
        number = phonenumbers.parse("+" + digits, None)
    except phonenumbers.NumberParseException as exc:
        raise InvalidContactNumber("Not an E.164 number: unknown country calling code.") from exc
    if not phonenumbers.is_possible_number(number):
        raise InvalidContactNumber("Not a possible number for its country (wrong length).")
    zones = tuple(z for z in phone_zones.time_zones_for_number(number) if z != phone_zones.UNKNOWN_TIMEZONE)
    if not zones:
        # the country code's own entry (typed in the package's stubs, underscore and all;
        # phonenumbers is pinned, and tests/campaigns/test_rules.py covers this branch)
        zones = tuple(z for z in phone_zones._country_level_time_zones_for_number(number)
                      if z != phone_zones.UNKNOWN_TIMEZONE)
    return ContactNumber(digits, zones)


def check_time_zone(name: str) -> str:
    """``name`` if it is an IANA zone this system knows; else ValueError."""
    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name:
        raise ValueError("Not an IANA time zone name (e.g. Europe/Paris).")
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"Unknown time zone {name!r} (IANA names, e.g. Europe/Paris).") from exc
    return name


def contact_zones(number: ContactNumber, given: str | None) -> tuple[str, ...]:
    """The zones the window is checked in: the given one, else the derived ones."""
    if given:
        return (check_time_zone(given),)
    if not number.time_zones:
        raise ValueError("No time zone can be derived from this number: give time_zone.")
    return number.time_zones
