"""Which ``Range`` headers the audio endpoint serves as a part (206/416), and which it ignores
(200, the whole file), per RFC 9110 §14.

werkzeug (which serves the part) answers 416 to several requests RFC 9110 says to answer with
the whole representation: a range unit other than ``bytes`` ("An origin server MUST ignore a
Range header field that contains a range unit it does not understand", §14.2), a suffix longer
than the file ("the entire representation is used", §14.1.2) and any multi-range request (it
only serves one range; a server MAY ignore Range, §14.2). Those are answered 200 with the whole
file here; a single range stays a 206, and a range beginning past the end stays a 416.
"""
from __future__ import annotations

from typing import Optional

_BYTES = "bytes"


def ignore_range(header: Optional[str], length: int) -> bool:
    """True when the request must get the whole file (200) whatever its ``Range`` says."""
    if not header:
        return False
    unit, equals, ranges = header.partition("=")
    if not equals or unit.strip().lower() != _BYTES:
        return True  # another unit (or no unit at all): not a byte range we understand
    specs = [spec.strip() for spec in ranges.split(",")]
    if len(specs) > 1:
        return True  # multipart/byteranges is not served: the whole file answers every part
    suffix = specs[0][1:] if specs[0].startswith("-") else ""
    return suffix.isdigit() and int(suffix) > length
