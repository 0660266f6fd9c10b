"""Every request's input is refused up front when it cannot be stored or processed, as a 4xx in
the API's error shape instead of a 500 from whichever layer would trip first: query parameters
with NUL characters (PostgreSQL text refuses them) and JSON bodies that the strict decoder
(``app.api.json_body``) refuses — lone surrogates, NUL, nesting too deep, numbers out of range,
NaN/Infinity, bad UTF-8 — and a body sent without ``Content-Type: application/json`` (415),
except on the upload routes of ``app.api.raw_uploads`` with one of their content types (their
body is left to the view, under their own size cap). Runs for every path (anonymous
``/auth/login`` included), after authentication on ``/api/`` paths so an anonymous caller
learns nothing more."""
from __future__ import annotations

from flask import request

from app.api import json_body
from app.api.raw_uploads import request_upload
from app.errors import UnsupportedMediaType, ValidationFailed

# Methods whose body the API reads; every body it reads is JSON but a raw upload's
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def refuse_unusable_input() -> None:
    for name, value in request.args.items(multi=True):
        problem = json_body.text_problem(name) or json_body.text_problem(value)
        if problem is not None:
            raise ValidationFailed("Query parameters must be plain text.",
                                   details={json_body.printable(name): [problem]})
    upload = request_upload(request)
    if upload is not None:
        request.max_content_length = upload.max_bytes  # Flask ≥ 3.1: this request's own cap
        return
    if request.is_json:
        raw = request.get_data(cache=True)  # over MAX_CONTENT_LENGTH: 413, chunked or not
        if raw:
            json_body.loads(raw)
    elif request.method in _BODY_METHODS and request.get_data(cache=True):
        sent = request.mimetype or "none"
        raise UnsupportedMediaType(
            f"Send the body as JSON with 'Content-Type: application/json' (got: {sent}).",
            details={"content_type": sent[:100]})
