"""The one list of API routes that take a body other than JSON, with its content types and size.

Every other body is JSON, capped at ``MAX_BODY_BYTES`` (``app.api.input_guard`` refuses the
rest with 415). An upload route named here is exempt from both, for exactly its method, path
and content types: the JSON guard lets its body through untouched, and the size cap becomes its
own (``BodyLimit`` for chunked bodies, the request's ``max_content_length``, set by the
input guard, for the rest). The
path is matched on the raw WSGI path, before routing, so the chunked-body cap knows it too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from flask import Request

from app import limits


@dataclass(frozen=True)
class RawUpload:
    method: str
    path: re.Pattern[str]
    content_types: frozenset[str]
    max_bytes: int


# PUT /api/moh/:name — an account's hold music (app/api/moh/routes.py)
MOH_UPLOAD = RawUpload("PUT", re.compile(r"^/api/moh/[^/]+$"),
                       frozenset({"audio/wav", "audio/x-wav", "audio/mpeg"}),
                       limits.MOH_UPLOAD_MAX_BYTES)
_CSV = frozenset({"text/csv"})
# POST /api/campaigns/:id/contacts/import — a campaign's contacts as CSV (app/api/campaigns/routes.py)
CONTACTS_CSV_UPLOAD = RawUpload("POST", re.compile(r"^/api/campaigns/[^/]+/contacts/import$"), _CSV,
                                limits.CAMPAIGN_CSV_MAX_BYTES)
# POST /api/do-not-call/import — numbers for the account's do-not-call list (app/api/do_not_call)
DNC_CSV_UPLOAD = RawUpload("POST", re.compile(r"^/api/do-not-call/import$"), _CSV, limits.CAMPAIGN_CSV_MAX_BYTES)
RAW_UPLOADS = (MOH_UPLOAD, CONTACTS_CSV_UPLOAD, DNC_CSV_UPLOAD)


def raw_upload(method: str, path: str, content_type: str) -> Optional[RawUpload]:
    """The upload route this request is, with one of its content types; None otherwise."""
    mimetype = content_type.split(";", 1)[0].strip().lower()
    for upload in RAW_UPLOADS:
        if method == upload.method and upload.path.match(path) and mimetype in upload.content_types:
            return upload
    return None


def request_upload(request: Request) -> Optional[RawUpload]:
    return raw_upload(request.method, request.path, request.content_type or "")

