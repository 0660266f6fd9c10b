"""The body of a CSV upload route (app/api/raw_uploads.py) as rows, or the JSON error a client
can act on: wrong content type (415), empty or unreadable file (422 naming the row)."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from flask import request
from flask_smorest import Blueprint

from app import limits
from app.api.errors import ErrorSchema
from app.api.raw_uploads import request_upload
from app.campaigns import csv_rows
from app.errors import UnsupportedMediaType, ValidationFailed

F = TypeVar("F", bound=Callable[..., Any])
_CSV_BODY = {"required": True, "content": {"text/csv": {"schema": {"type": "string", "format": "binary"}}}}


def documented_csv_upload(blp: Blueprint) -> Callable[[F], F]:
    """The OpenAPI request body and error answers every CSV upload route shares."""
    def decorate(view: F) -> F:
        for status, description in (
                (413, f"payload_too_large: over {limits.CAMPAIGN_CSV_MAX_BYTES} bytes"),
                (415, "unsupported_media_type: not text/csv"),
                (422, "invalid_csv or validation_failed, naming the row(s)")):
            view = blp.alt_response(status, schema=ErrorSchema, description=description)(view)
        return blp.doc(requestBody=_CSV_BODY)(view)
    return decorate


def uploaded_rows(*, required: str, max_rows: int) -> list[tuple[int, dict[str, str]]]:
    if request_upload(request) is None:
        sent = request.mimetype or "none"
        raise UnsupportedMediaType(f"Send the file with 'Content-Type: text/csv' (got: {sent}).",
                                   details={"content_type": sent[:100]})
    try:
        return csv_rows.read(request.get_data(cache=False), required=required, max_rows=max_rows)
    except csv_rows.CsvRejected as exc:
        raise ValidationFailed(f"Nothing imported: {exc.message}", code="invalid_csv",
                               details={"rows": [{"row": exc.row, "message": exc.message}]}) from exc
